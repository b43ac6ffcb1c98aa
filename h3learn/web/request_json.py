"""The JSON body of a request, read with the project's one JSON parser (trace/json_text.py).

Flask's ``request.get_json`` lets a body nested a thousand deep raise RecursionError (a
500), and one with a 5,000-digit number fail unexplained. Every endpoint that takes a
JSON body reads it through `json_body` instead: a body that is not JSON is None (the
endpoint then says what to send), and JSON beyond the parser's limits is a 400 that names
the rule (``{"error": "the request body: JSON nested too deeply (...)"}``).
"""

from __future__ import annotations

from typing import Any

from flask import request
from werkzeug.exceptions import BadRequest

from h3learn.trace.json_text import NotJSON, UnusableJSON, check_depth, parse_json


def json_body() -> Any:
    """The body as JSON; None when it is not JSON (or not sent as JSON); 400 if unusable."""
    if not request.is_json:
        return None
    try:
        text = request.get_data(cache=True).decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        body = parse_json(text)
        check_depth(body)
    except NotJSON:
        return None
    except UnusableJSON as error:
        raise BadRequest(f"the request body: {error}") from None
    return body
