"""The registry of suite kinds: the code behind each folder of templates/."""

from __future__ import annotations

from toolkit.errors import InputError
from toolkit.suites.base import SuiteKind
from toolkit.suites.bbq import Bbq
from toolkit.suites.crows_pairs import CrowsPairs
from toolkit.suites.honest import Honest
from toolkit.suites.iat import Iat
from toolkit.suites.ifm import Ifm
from toolkit.suites.sentiment import Sentiment
from toolkit.suites.sos import Sos
from toolkit.suites.sos_study import SosStudy

KINDS: dict[str, SuiteKind] = {
    kind.id: kind for kind in (Sentiment(), Sos(), Honest(), Ifm(), Iat(), Bbq(), CrowsPairs(), SosStudy())
}


def kind_of(suite_id: str) -> SuiteKind:
    try:
        return KINDS[suite_id]
    except KeyError:
        raise InputError(
            f"templates/{suite_id}/ has no suite kind in polyprobe; known kinds: {', '.join(sorted(KINDS))}"
        ) from None
