export PYTHONPATH=src
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
timeout 280 python -m gemmlab profile --script examples/torch_step.py --range step --launch-count 2000 --groups launch --out $OUT/step_process.ncu-rep --json > $OUT/step_process.json 2> $OUT/step_process.err
echo "gemmlab profile exit $?"
python - <<'PY'
import json, os
d = json.load(open(os.environ["OUT"] + "/step_process.json"))
print("gemmlab (process scope): kernels profiled:", len(d["kernels"]), "warnings:", d.get("warnings"))
print("command has --nvtx-push-pop-scope:", "--nvtx-push-pop-scope" in d["command"])
PY
for scope in thread process; do
  timeout 250 $NCU --nvtx --nvtx-include step/ --nvtx-push-pop-scope $scope --launch-count 2000 --metrics gpu__time_duration.sum --target-processes all python examples/torch_step.py > $OUT/raw_$scope.txt 2>&1
  echo "raw ncu, scope $scope: $(grep -c '==PROF== Profiling' $OUT/raw_$scope.txt) launches profiled"
done
