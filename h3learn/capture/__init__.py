"""Live capture: the recording HTTP/3 endpoint of `h3learn serve`, and its captures.

`hub.py` keeps the captures (live in memory, every one on disk through
h3learn/trace/captures.py); `endpoint.py` runs the HTTP/3 server on UDP in a thread of its
own; `fetcher.py` lets the Live page make the project's client fetch a URL. The web layer
(h3learn/web/live.py) reads from here; nothing here knows Flask.
"""
