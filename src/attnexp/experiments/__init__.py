"""Experiment code the papers share: the cached forward pass every attention experiment starts from
(`cached`) and the debate matrix that sets the papers' tests side by side (`debate_matrix`). Each
paper's own experiment, tables and figures are in its package under `attnexp.papers`."""
