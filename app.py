"""Run the dashboard from a checkout: ``streamlit run app.py`` (the app that ``ndcg-lab app`` runs).

The app lives in the ``ndcg_lab`` package; its Streamlit settings are ndcg_lab/.streamlit, which
the .streamlit link beside this file makes this script's settings too."""
from ndcg_lab.app import main

main()
