"""HTML reports: a run's ``stats.json``, or a comparison, as one self-contained page of
tables and Bokeh charts that opens offline (``l3fwd-sim report``, ``run --report``,
``testpmd --report``, ``compare --report``)::

    from l3fwd_sim.report import write_report, write_compare_report
    write_report("out")                                   # out/report.html from out/stats.json
    write_compare_report(compare("a", "b"), "a-b.html")   # compare()'s dict as a page

Importing this package imports Bokeh (about a second): the commands import it only when
a report is asked for, so that ``run`` itself starts fast.
"""
from .compare_report import write_compare_report
from .run_report import REPORT_FILE, write_report

__all__ = ["write_report", "write_compare_report", "REPORT_FILE"]
