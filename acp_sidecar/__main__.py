"""``python -m acp_sidecar`` is the same as the ``acp-sidecar`` command."""

from acp_sidecar.cli import main

raise SystemExit(main())
