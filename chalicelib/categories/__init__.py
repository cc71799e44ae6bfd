"""Categories: roles and the typed fields a listing of each role carries (data files in ``data/``)."""
