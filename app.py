"""Run the dashboard from a checkout: ``streamlit run app.py`` (the app that ``ndcg-lab app`` runs).

The app lives in the ``ndcg_lab`` package; its Streamlit settings are ndcg_lab/.streamlit, which
the .streamlit link beside this file makes this script's settings too. ``streamlit run`` finds
the ``app`` below and serves it with the app's own routes (the ``/s/`` short links); each
session then runs this file as ``__main__``."""
import streamlit as st

from ndcg_lab.app import main
from ndcg_lab.ui import share

if __name__ == "__main__":
    main()
else:
    app = st.App(__file__, routes=share.routes())
