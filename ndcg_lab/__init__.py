"""nDCG Lab's dashboard: the entry script (app.py), its pages (views/), the Streamlit glue they
share (ui/), the Streamlit settings and the sample collections. The library is ``metrics``."""
