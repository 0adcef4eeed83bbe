"""Workflows: what a command does, composed from the layers below it (collect and parse, analysis,
report, the harness and the store). Commands parse arguments and print; everything between is here.
Nothing here prints.
"""
