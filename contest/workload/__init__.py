"""Workload phases (LST-Bench style, for keyed upserts): a workload file's `[[phase]]`
tables and `[longevity]` block as a validated plan (`plan`), run for each strategy
(`runner`), one typed record per phase (`record`), the degradation rate (`metrics`)
and the rendered report (`report`)."""
