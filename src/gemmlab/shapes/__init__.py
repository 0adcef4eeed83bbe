"""The shape map (``gemmlab shapes``): the best FP32 rung and cuBLAS over a grid of shapes.

- ``grids``: the named grids (a documented data structure), ``--shapes`` parsing and the
  validated options of one run.
- ``shapemap``: the pure logic (percent of cuBLAS, shape classes, worst shapes, misses of a target
  or floor, bandwidth of skinny shapes), tested on a CPU with fake timings.
- ``measure``: the GPU part (the ladder's harness, cuBLAS FP32 in the same process).
"""
