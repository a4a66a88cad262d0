"""Published kernels re-run on the simulator: the calibration kernels, points and evaluation.

- :mod:`ascsim.calib.vector`, :mod:`ascsim.calib.datacopy`, :mod:`ascsim.calib.matmul`: pyasc
  kernels that follow published samples (Add, GELU/ReLU, softmax, DataCopy sweeps, the Matmul
  API tiling steps, Matmul + activation fusion), with the samples' knobs as parameters.
- :mod:`ascsim.calib.kernels`: those kernels (and three examples) by name.
- :mod:`ascsim.calib.points`: the points-file schema; ``points.yaml`` holds every published
  point re-run so far.
- :mod:`ascsim.calib.measure`: simulate one point and read off its per-pipe times.

``benchmarks/calibration.py --points FILE`` prints simulated against published times.
The package lives in ``ascsim`` (not ``benchmarks/``) so the benchmark, the tests and the
constant fitting that follows can all import the kernels and ship the points file as package
data.
"""
