"""Rule render_table: results/tables/<name>.md -> results/report/<name>.html, the page the report shows."""

from pathlib import Path

from attnexp import io
from attnexp.markdown import markdown_html
from attnexp.workflow import fail_cleanly, log_to

log = log_to(snakemake.log[0])
with fail_cleanly(ValueError, KeyError):
    markdown = Path(snakemake.input[0]).read_text(encoding="utf-8")
    io.write_text(snakemake.output[0], markdown_html(markdown, title=snakemake.wildcards.table))
    log(f"{snakemake.input[0]} -> {snakemake.output[0]}")
