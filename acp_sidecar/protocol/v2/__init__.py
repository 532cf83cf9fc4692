"""ACP v2 wire types (the preview protocol), beside the v1 ones in :mod:`acp_sidecar.protocol`.

Only what a v2 connection serves is typed here; a v2 shape identical to v1's reuses the v1
class. Imported only once a connection has negotiated v2, never on the v1 cold start.
"""

from typing import Final

PROTOCOL_VERSION: Final = 2
"""The ACP major version of this package."""
