# Every raw/details export of both corpora through `gemmlab analyze --all --json` with the source tree
# at $1 (PYTHONPATH): primary category and confidence, every finding's, and the ladder step.
SRC=$1
for f in tests/fixtures/corpus/h100/*_raw.csv tests/fixtures/corpus/h100/*_details.csv tests/fixtures/corpus/h100_grown/*_raw.csv tests/fixtures/corpus/h100_grown/*_details.csv; do
  PYTHONPATH=$SRC .venv/bin/python -m gemmlab analyze $f --all --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
for k in d['kernels']:
    p=k['primary']; l=k.get('ladder') or {}
    print('$f', k['id'], p['category'], p['confidence'], [(f['category'],f['confidence']) for f in k['findings']], l.get('rung'), (l.get('action') or '')[:60])
"
done
