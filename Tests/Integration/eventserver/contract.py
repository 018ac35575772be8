"""The site's API document (docs/api/openapi.yaml) as a checker: every request a door
sends and every answer the test server gives is validated against it by openapi-core,
and each mismatch is returned as a line of text (the server records them in its
snapshot's ``schemaProblems``)."""

from __future__ import annotations

import functools
import pathlib

import yaml
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.exceptions import OpenAPIError
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

DOCUMENT = pathlib.Path(__file__).resolve().parents[3] / "docs" / "api" / "openapi.yaml"


@functools.lru_cache(maxsize=None)
def contract(path: pathlib.Path = DOCUMENT) -> OpenAPI:
    document = yaml.safe_load(path.read_text())
    # The document's server is a placeholder for the site's own URL: here any host.
    document["servers"] = [{"url": "/"}]
    return OpenAPI.from_dict(document)


def _request(method: str, path: str, headers: dict[str, str], body: bytes) -> WerkzeugOpenAPIRequest:
    environ = EnvironBuilder(method=method, path=path, headers=headers, data=body,
                             base_url="http://127.0.0.1/").get_environ()
    return WerkzeugOpenAPIRequest(Request(environ))


MOST_DETAILS = 20


def _problem(error: Exception) -> str:
    # openapi-core wraps the schema errors it found; the innermost say what was wrong.
    details = []
    cause = error
    while cause is not None:
        for inner in getattr(cause, "schema_errors", None) or []:
            for error in _nearest(inner):
                where = "/".join(str(part) for part in error.absolute_path)
                details.append(f"{where or '(body)'}: {error.message}")
        cause = cause.__cause__
    if len(details) > MOST_DETAILS:
        details = details[:MOST_DETAILS] + [f"and {len(details) - MOST_DETAILS} more"]
    return "; ".join(details) if details else f"{type(error).__name__}: {error}"


def _nearest(error) -> list:
    """The errors of the oneOf branch that came nearest (fewest errors, then the deepest:
    a wrong major of an iBeacon identity rather than "not an Eddystone one"), or the error."""
    if not error.context:
        return [error]
    branches: dict = {}
    for inner in error.context:
        branches.setdefault(inner.relative_schema_path[0], []).append(inner)
    return min(branches.values(), key=lambda errors: (len(errors), -max(len(e.absolute_path) for e in errors)))


def request_problems(method: str, path: str, headers: dict[str, str], body: bytes,
                     document: pathlib.Path = DOCUMENT) -> list[str]:
    """What is wrong with a request as the document describes it (empty: nothing)."""
    try:
        contract(document).validate_request(_request(method, path, headers, body))
    except OpenAPIError as error:
        return [f"request {method} {path}: {_problem(error)}"]
    return []


LARGEST_CHECKED_ANSWER = 512 * 1024


def answer_problems(method: str, path: str, request_headers: dict[str, str], request_body: bytes,
                    status: int, headers: dict[str, str], body: bytes,
                    document: pathlib.Path = DOCUMENT) -> list[str]:
    """What is wrong with an answer to that request (empty: nothing). An answer over
    `LARGEST_CHECKED_ANSWER` is not checked: only the hostile rosters of test_roster.py
    are that large, out of the document on purpose, and checking 1.4 million empty
    persons, an error each, took the test process past 20 GB."""
    if len(body) > LARGEST_CHECKED_ANSWER:
        return []
    response = Response(body, status=status, headers=headers)
    if "Content-Type" not in headers:
        del response.headers["Content-Type"]
    try:
        contract(document).validate_response(_request(method, path, request_headers, request_body),
                                                WerkzeugOpenAPIResponse(response))
    except OpenAPIError as error:
        return [f"answer {status} to {method} {path}: {_problem(error)}"]
    return []
