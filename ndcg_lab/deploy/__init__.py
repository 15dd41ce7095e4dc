"""Running the app as several processes behind nginx, for a lecture hall at once.

:mod:`.nginx` writes the proxy's configuration (the site an operator installs, or a whole
configuration nginx runs as the user); :mod:`.replicas` starts the processes and nginx and keeps
them running (``ndcg-lab app --replicas N``).
"""
