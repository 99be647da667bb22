#!/bin/bash
python3 - <<'EOF'
import json
c = json.load(open('/app/config.v1.json'))
c['hostname'] = c.pop('host')
c['timeout_ms'] = c.pop('timeout') * 1000
c['version'] = 2
open('/app/config.v2.json', 'w').write(json.dumps(c, indent=2) + '\n')
EOF
