"""The preamble every plot script of studies/ shares: the package's figure conventions
(python/kvpolicy/figures.py: matplotlib without a display, offline references dashed, legends
beside the data, latency axes without a forced zero, a check before saving), imported from the
source tree so that a study needs no built package.

    from plotting import plt, style, save, legend_beside, offline_style, latency_axis
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                                "kvpolicy"))
from figures import (  # noqa: E402,F401  (re-exported)
    latency_axis,
    legend_beside,
    offline_style,
    plt,
    save,
    style,
    trace_name,
)
