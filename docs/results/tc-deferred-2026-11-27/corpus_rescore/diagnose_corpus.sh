# Every export of both corpora - raw, raw_base and details CSV, and the .ncu-rep (decompressed from
# tests/fixtures/corpus/*/*.ncu-rep.xz into $2) - through `gemmlab analyze --all --json` with the
# source tree at $1 (PYTHONPATH) and its own decode cache: primary category and confidence, every
# finding's, and the ladder step.
SRC=$1; REPS=$2; CACHE=$3
for f in tests/fixtures/corpus/h100/*_raw.csv tests/fixtures/corpus/h100/*_raw_base.csv tests/fixtures/corpus/h100/*_details.csv \
         tests/fixtures/corpus/h100_grown/*_raw.csv tests/fixtures/corpus/h100_grown/*_raw_base.csv tests/fixtures/corpus/h100_grown/*_details.csv \
         $REPS/*.ncu-rep; do
  GEMMLAB_CACHE_DIR=$CACHE PYTHONPATH=$SRC .venv/bin/python -m gemmlab analyze $f --all --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
for k in d['kernels']:
    p=k['primary']; l=k.get('ladder') or {}
    print('$(basename $f)', k['id'], p['category'], p['confidence'], [(f['category'],f['confidence']) for f in k['findings']], l.get('rung'), (l.get('action') or '')[:60])
"
done
