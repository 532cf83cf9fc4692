"""acp-sidecar: an Agent Client Protocol (ACP v1) agent that runs tools and draws their cards.

The public surface for tool authors lives in :mod:`acp_sidecar.tools`; this module only
carries the package version so that ``acp-sidecar --version`` stays cheap to import.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
