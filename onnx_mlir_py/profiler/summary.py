"""Reading a profile trace (onnxruntime's format: ours, or onnxruntime's
own): :func:`summarize` groups the node events into the ``model_run`` events
that contain them and averages per run; :func:`report` prints the top nodes,
the time per op type and the share of the model call outside the nodes'
code; :func:`write_chart` draws the top nodes as a PNG bar chart (needs
matplotlib: ``pip install 'onnx-mlir-py[profile]'``; else None).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

_SUFFIX = "_kernel_time"


@dataclass
class NodeTime:
    name: str
    op_type: str
    fused: list[str]
    us: float = 0.0          # mean per run


@dataclass
class Summary:
    runs: int
    run_us: float                                   # mean model_run
    nodes: list[NodeTime] = field(default_factory=list)   # by time, largest first

    @property
    def node_us(self) -> float:
        return sum(n.us for n in self.nodes)

    def by_op_type(self) -> list[tuple[str, int, float]]:
        """(op type, node count, mean us per run), largest first."""
        acc: dict[str, list] = {}
        for n in self.nodes:
            a = acc.setdefault(n.op_type, [0, 0.0])
            a[0] += 1
            a[1] += n.us
        return sorted(((t, c, us) for t, (c, us) in acc.items()), key=lambda r: -r[2])


def summarize(events: list[dict], skip: int = 0) -> Summary:
    """Mean times per run of a trace's node events, the first ``skip`` runs
    (warm-up) left out. A node event belongs to the ``model_run`` event that
    contains it (same thread)."""
    runs = sorted((e for e in events if e.get("cat") == "Session" and
                   e.get("name") == "model_run"), key=lambda e: e["ts"])
    if len(runs) <= skip:
        raise ValueError(f"the trace has {len(runs)} model_run event(s), {skip} to skip")
    runs = runs[skip:]
    nodes = sorted((e for e in events if e.get("cat") == "Node"), key=lambda e: e["ts"])
    totals: dict[str, NodeTime] = {}
    k = 0
    for run in runs:
        lo, hi = run["ts"], run["ts"] + run["dur"]
        while k < len(nodes) and nodes[k]["ts"] < lo:
            k += 1
        while k < len(nodes) and nodes[k]["ts"] <= hi:
            e = nodes[k]
            k += 1
            if e.get("tid") != run.get("tid"):
                continue
            name = e["name"][:-len(_SUFFIX)] if e["name"].endswith(_SUFFIX) else e["name"]
            args = e.get("args", {})
            t = totals.setdefault(name, NodeTime(name, args.get("op_name", "?"),
                                                 list(args.get("fused_nodes", []))))
            t.us += e["dur"]
    n = len(runs)
    for t in totals.values():
        t.us /= n
    return Summary(n, sum(r["dur"] for r in runs) / n,
                   sorted(totals.values(), key=lambda t: -t.us))


def report(s: Summary, top: int = 15, call_us: float | None = None, out=None) -> None:
    out = sys.stdout if out is None else out
    unit, scale = ("ms", 1e3) if s.run_us >= 1e3 else ("us", 1.0)

    def ms(us: float) -> str:
        return f"{us / scale:9.3f}"

    def pct(us: float) -> str:
        return f"{100 * us / s.run_us:6.1f}%" if s.run_us else "     -"
    print(f"{s.runs} run(s); model call {ms(s.run_us).strip()} {unit} per run"
          + (f" ({ms(call_us).strip()} {unit} from Python)" if call_us is not None else ""),
          file=out)
    print(f"\ntop {min(top, len(s.nodes))} of {len(s.nodes)} nodes ({unit} per run):", file=out)
    width = max([len(n.name) for n in s.nodes[:top]] + [4])
    print(f"  {'node':<{width}} {'op type':<20} {unit:>9} {'share':>7}  fused into it", file=out)
    for n in s.nodes[:top]:
        print(f"  {n.name:<{width}} {n.op_type:<20} {ms(n.us)} {pct(n.us)}  {', '.join(n.fused)}",
              file=out)
    print(f"\nper op type ({unit} per run):", file=out)
    print(f"  {'op type':<20} {'nodes':>5} {unit:>9} {'share':>7}", file=out)
    for t, c, us in s.by_op_type():
        print(f"  {t:<20} {c:>5} {ms(us)} {pct(us)}", file=out)
    outside = s.run_us - s.node_us
    print(f"\nnodes' code: {ms(s.node_us).strip()} {unit} ({pct(s.node_us).strip()} of the model "
          f"call); outside it: {ms(outside).strip()} {unit} ({pct(outside).strip()}: input checks, "
          "output wrapping, allocations between nodes)", file=out)


def write_chart(s: Summary, path: str, top: int = 15, title: str = "") -> str | None:
    """A horizontal bar chart of the top nodes (ms per run) as a PNG at
    ``path``; None (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = s.nodes[:top][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    labels = [f"{n.name} ({n.op_type}{' +' + str(len(n.fused)) if n.fused else ''})"
              for n in rows]
    ax.barh(labels, [n.us / 1e3 for n in rows], color="tab:blue")
    ax.set_xlabel("ms per run")
    ax.set_title(title or f"top nodes: {s.node_us / 1e3:.2f} of {s.run_us / 1e3:.2f} ms per run")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
