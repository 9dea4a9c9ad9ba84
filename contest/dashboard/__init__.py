"""`contest dashboard`: every result file under results/ in one page with filters.

`load` reads the JSON-lines files (old and new record shapes) into one DuckDB
in-memory database, `page` renders it as one self-contained HTML page (Plotly charts,
HTML tables, a small script for the filters), `serve` hands that page out with
Python's own http.server. README, "Dashboard", says why it is built this way.
"""

from contest.dashboard.load import load
from contest.dashboard.page import render
from contest.dashboard.serve import serve, write_page

__all__ = ["load", "render", "serve", "write_page"]
