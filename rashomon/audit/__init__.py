"""Reliance audits of a table: the analysis of Fisher, Rudin & Dominici (2019, §10), its CLI and HTML report."""
from ._audit import AuditResult, GroupAudit, audit

__all__ = ["audit", "AuditResult", "GroupAudit"]
