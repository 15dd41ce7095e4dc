"""The dashboard's pages, one per file (run by app.py through st.navigation)."""
