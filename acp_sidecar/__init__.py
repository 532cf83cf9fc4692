"""acp-sidecar: an ACP v1 agent that runs tools and draws their cards. Only the version lives
here, so ``--version`` stays cheap; tool authors import from :mod:`acp_sidecar.tools`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
