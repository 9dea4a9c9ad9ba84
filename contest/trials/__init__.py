"""The trials: runs broken on purpose (kill -9, a crashed server, a full disk, racing
writers), restarted, and their tables checked against the oracle; and the interop
matrix (each format's table written by one engine, read by another).

`breaks` (the one way a run is broken), `faults/` (`contest bench faults`), `stream/`
(the stream's kill trials at each format's own commit boundary: `contest bench stream
--boundary-kills`), `interop` (`contest bench interop`). Their pages and the sittings
that run them are benchmarks (contest/benchmarks/registry.py)."""
