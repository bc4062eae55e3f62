"""The registry of suite kinds: the code behind each folder of templates/."""

from __future__ import annotations

from toolkit.core.errors import InputError
from toolkit.render.suites.base import SuiteKind
from toolkit.render.suites.bbq import Bbq
from toolkit.render.suites.crows_pairs import CrowsPairs
from toolkit.render.suites.honest import Honest
from toolkit.render.suites.iat import Iat
from toolkit.render.suites.ifm import Ifm
from toolkit.render.suites.sentiment import Sentiment
from toolkit.render.suites.sentiment_control import SentimentControl
from toolkit.render.suites.sos import Sos
from toolkit.render.suites.sos_study import SosStudy

KINDS: dict[str, SuiteKind] = {
    kind.id: kind
    for kind in (
        Sentiment(),
        SentimentControl(),
        Sos(),
        Honest(),
        Ifm(),
        Iat(),
        Bbq(),
        CrowsPairs(),
        SosStudy(),
    )
}


def kind_of(suite_id: str) -> SuiteKind:
    """The kind behind a suite folder; a folder polyprobe has no code for is an error listing the kinds."""
    try:
        return KINDS[suite_id]
    except KeyError:
        raise InputError(
            f"templates/{suite_id}/ has no suite kind in polyprobe; known kinds: {', '.join(sorted(KINDS))}"
        ) from None
