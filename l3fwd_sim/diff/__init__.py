"""``l3fwd-sim compare`` — whether and where two sets of captures differ: packets paired
by digest (``align``), differences named by field (``fields``), the text report (``report``)."""
