"""squall's image in a Testcontainers test: started, waited for, and reached at its mapped port.

    from squall.testcontainers import SquallContainer

    with SquallContainer() as squall:
        run = squall.create_run({"name": "flaky", "attempts": [{"status": 503}, {"stream": {"text": "hi"}}]})
        client = OpenAI(base_url=run["base_url"], api_key="test")   # or run["anthropic_base_url"], ...
        ...
        assert len(squall.journal(run)["requests"]) == 2

`squall.judge()` is the judge as a service in the container (pytest_squall's `Judge`): a run of one
case, and the verdict on what the client did. Needs `pip install squall[testcontainers]`.
"""

import json
import urllib.request
from importlib import metadata

from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import LogMessageWaitStrategy

from pytest_squall.client import Judge

# The port squall serves on in its image (image/Containerfile).
PORT = 8080


def default_image():
    """`squall:VERSION`, the tag scripts/build-image.sh gives the image of this wheel's version."""
    try:
        return "squall:" + metadata.version("squall")
    except metadata.PackageNotFoundError:
        return "squall:latest"


class SquallContainer(DockerContainer):
    """`squall serve` in a container. `scenarios`: a folder of scenario files to serve (mounted
    read-only); `admin_token`: required on the admin API and sent by this class's calls."""

    def __init__(self, image=None, *, scenarios=None, admin_token=None, **kwargs):
        super().__init__(image or default_image(), **kwargs)
        self.admin_token = admin_token
        self.with_exposed_ports(PORT)
        if admin_token:
            self.with_env("SQUALL_ADMIN_TOKEN", admin_token)
        if scenarios:
            self.with_volume_mapping(str(scenarios), "/squall/scenarios", "ro")
        # With --allow-remote a warning is the first line: wait for the address line itself.
        self.waiting_for(LogMessageWaitStrategy("squall listening on"))

    def start(self):
        # A runtime picks a free host port, then binds it: on a busy machine another process can
        # take it in between ("address already in use"). Another try picks another port.
        for attempt in range(1, 4):
            try:
                return super().start()
            except Exception as error:  # docker.errors.APIError, from the runtime's reply
                if attempt == 3 or "address already in use" not in str(error):
                    raise
                if self._container is not None:
                    self._container.remove(force=True)
                    self._container = None
        raise AssertionError("unreachable")

    def url(self):
        """The origin squall is reached at from here: `http://HOST:MAPPED_PORT`."""
        return f"http://{self.get_container_host_ip()}:{self.get_exposed_port(PORT)}"

    def _call(self, method, path, body=None):
        headers = {"content-type": "application/json"}
        if self.admin_token:
            headers["authorization"] = "Bearer " + self.admin_token
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url() + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.load(reply)

    def create_run(self, scenario, time_scale=None):
        """A run of `scenario` (a catalogue name, or an inline scenario as a dict): its id and its
        base URL for each API (`base_url`, `anthropic_base_url`, `gemini_base_url`, ...), each
        naming the mapped port."""
        body = {"scenario": scenario}
        if time_scale is not None:
            body["time_scale"] = time_scale
        return self._call("POST", "/__squall/runs", body)

    def journal(self, run):
        """Every request the run saw (`requests`), as `GET /__squall/runs/{id}/journal` gives it."""
        return self._call("GET", f"/__squall/runs/{run['id']}/journal")

    def metrics(self):
        """`GET /metrics`: the server's counts in the Prometheus text format."""
        headers = {"authorization": "Bearer " + self.admin_token} if self.admin_token else {}
        request = urllib.request.Request(self.url() + "/metrics", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.read().decode()

    def judge(self):
        """The judge as a service in the container: `judge.cases()`, `judge.create_run(case_id)`
        and `judge.verdict(run, outcome)` (docs/service.md)."""
        return Judge(self.url(), token=self.admin_token)
