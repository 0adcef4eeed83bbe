# a persistent-style launch: one block per SM, in clusters of 4 (33 clusters where 30 fit)
import pathlib
import cupy
src = pathlib.Path("benchmarks/corpus/planted_clusters.cu").read_text()
k = cupy.RawKernel(src, "planted_cluster4_fma", options=("-std=c++17",))
k.max_dynamic_shared_size_bytes = 120 * 1024
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
y = cupy.empty(sms, dtype=cupy.float32)
for _ in range(3):
    k((sms,), (1024,), (y, cupy.int32(2048), cupy.float32(1.0000001), cupy.float32(0.3)), shared_mem=120 * 1024)
cupy.cuda.Device().synchronize()
print("ran", float(y[0]))
