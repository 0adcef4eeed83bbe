"""Markdown and HTML reports with plots."""
