#!/bin/bash
printf '#!/bin/bash\ngrep " ERROR " /var/log/app/server.log\n' > /app/errors.sh
chmod +x /app/errors.sh
/app/errors.sh > /app/errors.txt
