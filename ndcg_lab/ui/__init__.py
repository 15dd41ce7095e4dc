"""Streamlit glue shared by the pages: session state, sidebar, caches. No computation lives here."""
