"""ascsim's measurements in the file formats of the Ascend toolchain.

- :mod:`ascsim.formats.msprof`: msprof's ``op_summary`` CSV, the op profiler's
  ``OpBasicInfo.csv`` and per-block ``PipeUtilization.csv``, and the op simulator's per-core
  ``code_exe.csv`` / ``instr_exe.csv`` hotspot tables (``ascsim run --msprof DIR``);
- :mod:`ascsim.formats.insight`: the op simulator's ``trace.json`` timeline, with its per-core
  lanes, which MindStudio Insight opens;
- :mod:`ascsim.formats.mssanitizer`: findings in msSanitizer's report shape
  (``ascsim check --report-format mssanitizer``).

Column names and layouts follow the vendor's public documentation, cited in docs/profile.md.
These modules only read finished reports and launches: they price nothing.
"""
