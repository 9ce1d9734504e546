"""Reliance audits of a table: the analysis of Fisher, Rudin & Dominici (2019, §10), its CLI and HTML report.

Names load on first use (``rashomon.utils.lazy.lazy_exports``).
"""

from ..utils.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {"audit": "._audit", "AuditResult": "._results", "GroupAudit": "._results"}
)
