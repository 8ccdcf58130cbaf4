"""squall's image in a Testcontainers test (`pip install squall[testcontainers]`; the image from
scripts/build-image.sh, loaded with `docker load` or `podman load`). A run's URLs name the port
the container is mapped to; the journal and /metrics count a scripted 503; the judge in the
container gives one case's verdict end to end."""
import json
import urllib.error
import urllib.request

import pytest

testcontainers = pytest.importorskip("testcontainers", reason="pip install squall[testcontainers]")
from squall.testcontainers import SquallContainer  # noqa: E402


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return urllib.request.urlopen(request, timeout=10)


def test_a_run_in_the_container_is_reached_journaled_counted_and_judged():
    with SquallContainer(admin_token="container-test") as squall:
        run = squall.create_run({"name": "flaky", "attempts": [{"status": 503}, {"stream": {"text": "after the 503", "chunks": 1}}]})
        assert run["base_url"].startswith(squall.url() + "/runs/"), run
        chat = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(run["base_url"] + "/chat/completions", chat)
        assert refused.value.code == 503
        assert "after the 503" in post(run["base_url"] + "/chat/completions", chat).read().decode()
        assert [r["status"] for r in squall.journal(run)["requests"]] == [503, 200]
        assert 'squall_requests_total{api="chat",protocol="http/1.1",status="503"} 1' in squall.metrics()

        # One case judged by the judge in the container: a client that gives up after the 503.
        judge = squall.judge()
        case = judge.create_run("req-0006-001/status-503-is-retried")
        with pytest.raises(urllib.error.HTTPError):
            post(case["base_url"] + "/responses", {"model": "m", "input": "hi", "stream": True})
        result = {"ok": False, "stop_reason": "error", "error_type": "HTTPError", "error_message": "503"}
        verdict = judge.verdict(case, {"result": result})
        failed = [check["name"] for check in verdict["checks"] if check["verdict"] == "fail"]
        assert verdict["verdict"] == "fail" and "the server sees exactly 2 attempts" in failed, verdict
