"""``rpc-agent batch``: many independent headless runs, on this machine or a Ray cluster.

No scheduler of our own: each task is one ``rpc-agent -p`` child process (``worker``), run by a
bounded pool of local threads or as a Ray task (``runners``); a crash or a timeout is a failed
result, never a lost batch. The results file is the batch's only state (``tasks``): one line
per finished task, fsynced, so a rerun skips what is done and an interrupted run leaves a valid
file. Ray is imported only when ``--ray`` asks for it.
"""
