"""Each brief is requested from the provider once across two channels and three replicas:
three processes' services on one database, members of two channels asking at once."""

from __future__ import annotations

import threading

from adapters.console import ConsoleSession
from bot.app import build_services
from tests.briefs.scene import llm_env

ASKERS = [(replica, channel, f"{channel}-member-{replica}") for replica in range(3)
          for channel in ("reading", "other-group")]


def test_six_askers_on_three_replicas_in_two_channels_cause_one_request(scene, database_url):
    replicas = [scene.services] + [build_services(database_url, clock=scene.clock, env=llm_env(scene.llm))
                                   for _ in range(2)]
    waiting = threading.Semaphore(0)  # one release per asker that met another's claim and waits for it
    for services in replicas:
        briefs = services.feature("briefs").briefs
        original = briefs.wait

        def wait(key, deadline, original=original, **kwargs):
            waiting.release()
            return original(key, deadline, **kwargs)

        briefs.wait = wait
    scene.llm.fail("slow")  # whichever asker calls first, its request waits until released
    answers: dict[str, object] = {}

    def ask(replica: int, channel: str, user: str) -> None:
        session = ConsoleSession(replicas[replica].core, channel=channel, user=user)
        answers[user] = session.send(f"brief {scene.ids['Robust']}")

    threads = [threading.Thread(target=ask, args=asker) for asker in ASKERS]
    for thread in threads:
        thread.start()
    for _ in range(len(ASKERS) - 1):  # every asker but the one calling the model is waiting on its claim
        assert waiting.acquire(timeout=60)
    while not scene.llm.completions():  # the one that claimed it is on its way to the model
        threading.Event().wait(0.01)
    scene.llm.release.set()
    for thread in threads:
        thread.join()

    assert len(scene.llm.completions()) == 1 and scene.calls_spent() == 1
    assert all(answer.ok for answer in answers.values()) and len(answers) == 6
    assert len({tuple(answer.sections[0].lines) for answer in answers.values()}) == 1
    assert scene.briefs_stored() == [(scene.ids["Robust"], "made")]
    for services in replicas[1:]:
        services.db.dispose()
