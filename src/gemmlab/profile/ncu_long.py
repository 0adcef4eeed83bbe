"""Reader for Nsight Compute's long CSV format: one metric or one rule message per row.

Three exports share it:

- ``ncu -i rep --page details --csv``: ``Metric Name`` is the display label ("Duration") in its
  section ("GPU Speed Of Light Throughput"), values rounded for display in scaled units
  ("34.31", "ms"); with ``--print-metric-name name`` the label is the raw metric name;
- what ``ncu --csv APP`` prints live: the same rows, among ncu's messages and program output;
- ``ncu --metrics a,b --csv APP``: section "Command line profiler metrics", raw metric names.

Columns: the 11 identity columns, ``Section Name, Metric Name, Metric Unit, Metric Value``, then
(ncu 2023+) ``Rule Name, Rule Type, Rule Description, Estimated Speedup Type, Estimated Speedup``.
Metric rows stop after the value (16 cells: ncu ends them with a comma); rule rows leave the
metric cells empty and carry the section *identifier* ("SpeedOfLight") in Section Name.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.errors import InputError
from gemmlab.profile.metrics import COMMAND_LINE_SECTION, name_for_label
from gemmlab.profile.ncu_csv import ID_COLUMNS, launch_from_identity
from gemmlab.profile.ncu_output import CsvBlock
from gemmlab.profile.records import KernelLaunch, Metric, RuleResult
from gemmlab.profile.units import parse_number, parse_value

LONG_COLUMNS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")
RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")


def is_long(header: list[str]) -> bool:
    return "Metric Name" in header and "Metric Value" in header


def read_long_block(block: CsvBlock, source: str, fmt: str,
                    problems: Optional[list[str]] = None) -> list[KernelLaunch]:
    """Group one block's rows by launch ID into KernelLaunch records.

    A row too short for what it holds raises InputError (a truncated file), unless ``problems``
    is given (live output, where it may be the program's own line): then it is skipped and
    described there.
    """
    header = block.header
    col = {h: i for i, h in enumerate(header)}
    missing = [c for c in LONG_COLUMNS if c not in col]
    if missing:
        raise InputError(f"{source}: long-format CSV lacks column(s) {', '.join(missing)}")
    idx = {h: i for h, i in col.items() if h in ID_COLUMNS}
    sec_i, name_i, unit_i, val_i = (col[c] for c in LONG_COLUMNS)
    value_width = max(sec_i, name_i, unit_i, val_i) + 1  # cells a metric row needs
    rule_i = [col.get(c) for c in RULE_COLUMNS]
    has_rules = rule_i[0] is not None
    pid_i = idx.get("Process ID")
    launches: dict[tuple[str, str], KernelLaunch] = {}  # by (process, ID): IDs restart per process
    last = len(block.rows) - 1
    for k, (lineno, row) in enumerate(block.rows):
        raw_id = row[idx["ID"]].strip() if len(row) > idx["ID"] else ""
        is_rule = has_rules and len(row) > rule_i[0] and row[rule_i[0]].strip() != ""
        need = len(header) if is_rule else value_width
        cut_at_end = (k == last and block.open_end and has_rules and not is_rule
                      and len(row) == value_width)
        if not raw_id or len(row) < need or len(row) > len(header) or cut_at_end:
            if not raw_id:
                what = f"line {lineno} has no launch ID"
            else:
                what = (f"line {lineno} has {len(row)} cells; a {'rule' if is_rule else 'metric'} row has "
                        f"{need}{'' if is_rule else f' to {len(header)}'}"
                        + (" and ends with a line break" if cut_at_end else ""))
            if problems is None:
                raise InputError(f"{source}: {what}: the CSV is truncated or mixes exports "
                                 "(expected a complete ncu --csv export)")
            problems.append(f"skipped {what}")
            continue
        key = (row[pid_i] if pid_i is not None else "", raw_id)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = launch_from_identity(row, idx, source, fmt)
        if is_rule:
            launch.rules.append(_rule(row, rule_i, row[sec_i].strip()))
            continue
        label = row[name_i].strip()
        if not label:
            continue  # a row with neither a metric nor a rule: nothing to keep
        section = row[sec_i].strip()
        value, unit = parse_value(row[val_i], row[unit_i])
        if value is None:
            continue  # n/a: the metric is missing for this launch
        name = name_for_label(section, label)
        if name not in launch.metrics:  # a label shown in two sections carries one value
            launch.metrics[name] = Metric(value, unit)
    return list(launches.values())


def long_format(blocks: list[CsvBlock], live: bool) -> str:
    """details-csv, live-csv or metrics-csv: metrics-csv when every metric row came from --metrics."""
    sections = set()
    for block in blocks:
        i = block.header.index("Section Name")
        j = block.header.index("Metric Name")
        sections.update(r[i] for _, r in block.rows if len(r) > j and r[j])
    if sections == {COMMAND_LINE_SECTION}:
        return "metrics-csv"
    return "live-csv" if live else "details-csv"


def _rule(row: list[str], cols: list, section: str) -> RuleResult:
    def cell(k: int) -> str:
        i = cols[k]
        return row[i].strip() if i is not None and i < len(row) else ""

    return RuleResult(
        name=cell(0),
        type=cell(1),
        description=cell(2),
        section=section,
        speedup_type=cell(3),
        estimated_speedup=parse_number(cell(4)) if cell(4) else None,
    )
