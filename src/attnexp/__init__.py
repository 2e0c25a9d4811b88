"""attnexp: the attention-as-explanation debate, replicated end to end from raw public data."""

__version__ = "0.1.0"
