"""`polyprobe eval report` over run folders written here in the format `polyprobe eval run`
writes (metrics computed by the real task and metric code on small hand-made predictions): a
section per task with plots (PNG and SVG) and tables, Markdown tables holding the values,
comparisons with the direction of each change, Hebrew / Arabic / Chinese labels kept as text
in the SVG, and a clear error (folder and file, exit 2) for every malformed run folder."""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest
import yaml

from evaluator.metrics import sentiment as sentiment_metrics
from evaluator.metrics.hurtlex import Lexicon
from evaluator.metrics.iat import pairs_column
from evaluator.report.document import fmt_delta, make_delta
from evaluator.report.text import visual
from evaluator.results.base import TaskMetrics
from evaluator.tasks import get_task
from evaluator.tasks.honest import honest_metrics
from tests.conftest import REPO
from toolkit.catalog.locales import WordSplit, load_locales
from toolkit.cli import main
from toolkit.core.project import Project
from toolkit.release.build import locale_entry

RELEASE = "0.1.0-preview.1"
SENTIMENT_LOCALES = ["en", "zh", "he", "ar"]
TASKS = ("sentiment", "sos", "honest", "bbq", "iat", "ifm")


# ------------------------------------------------------------------------- run folders


def write_run(
    folder: Path,
    task: str,
    predictions: pl.DataFrame,
    metrics: TaskMetrics,
    *,
    model: str,
    locales: list[str],
    release: str = RELEASE,
    settings: dict[str, Any] | None = None,
) -> Path:
    """A run folder as evaluator/run.py writes it."""
    signature = (
        f"polyprobe-eval|task:{task}|release:{release}|model:{model}|revision:none|kind:causal|"
        f"seed:0|limit:none|locales:{','.join(locales)}|toolkit:0.1.0"
    )
    folder.mkdir(parents=True)
    predictions.write_parquet(folder / "predictions.parquet")
    dump = {"ensure_ascii": False, "indent": 2, "sort_keys": True, "default": str}
    (folder / "metrics.json").write_text(
        json.dumps({"task": task, "signature": signature, "metrics": metrics.dump()}, **dump),
        encoding="utf-8",
    )
    (folder / "signature.txt").write_text(signature + "\n", encoding="utf-8")
    info = {
        "task": task,
        "options": {"task": task, "model": model, "seed": 0, "limit": None},
        "locales": locales,
        "release": {
            "path": "dist",
            "version": release,
            "signature": f"release-{release}",
            "preview": True,
            "locales": described(locales),
        },
        "model": {"name": model, "resolved": None, "revision": "none", "kind": "causal", "labels": []},
        "backend_settings": {},
        "task_settings": settings or {},
        "environment": {"python": "3.11"},
        "signature": signature,
    }
    (folder / "run.json").write_text(json.dumps(info, **dump), encoding="utf-8")
    return folder


def described(codes: list[str]) -> dict[str, Any]:
    """The locales as a release of the repository's catalog describes them in run.json."""
    catalog = load_locales(Project.at(REPO))
    return {
        code: locale_entry(catalog[code], catalog.codes.index(code)).model_dump(mode="json") for code in codes
    }


def ctx(locales: list[str]) -> Any:
    """What the tasks' metrics() read from their context: the locales and the seed."""
    task_options = {"k": 2, "hurtlex_level": "conservative", "original_script": False}
    return SimpleNamespace(
        locales=locales,
        options=SimpleNamespace(seed=0, option=task_options.__getitem__),
    )


SENTIMENT_GROUPS = {
    "gender": ["female", "male"],
    "nationality": ["french", "german", "israeli", "chinese"],
    "religion": ["christianity", "islam", "judaism"],
}


def sentiment_run(folder: Path, model: str, penalty: float, seed: int) -> Path:
    """P(positive) with a planted penalty for islam, growing with ``penalty``."""
    rng = random.Random(seed)
    rows = []
    for loc in SENTIMENT_LOCALES:
        for attribute, groups in SENTIMENT_GROUPS.items():
            for t in range(4):
                template = f"{attribute[:3]}-{t:02d}"
                for variant in ("f", "m"):
                    for group in groups:
                        if attribute == "gender" and group != {"f": "female", "m": "male"}[variant]:
                            continue
                        p = 0.35 + 0.3 * rng.random() - (penalty if group == "islam" else 0.0)
                        p = min(max(p, 0.0), 1.0)
                        parallel = f"sentiment:{template}:{variant}:{group}"
                        rows.append(
                            {
                                "sample_id": f"{loc}:{parallel}",
                                "parallel_id": parallel,
                                "locale": loc,
                                "template": template,
                                "variant": variant,
                                "attribute": attribute,
                                "group": group,
                                "region": "global",
                                "standing": "none",
                                "label": "positive" if t % 2 else "negative",
                                "reference": group == "christianity",
                                "p_pos": p,
                                "probs": [p, 1.0 - p, 0.0],
                                "pred_label": "positive" if p > 0.5 else "negative",
                                "model_labels": "positive,negative,neutral",
                                "prob_labels": "positive,negative,neutral",
                            }
                        )
    predictions = pl.DataFrame(rows)
    metrics = get_task("sentiment").metrics(ctx(SENTIMENT_LOCALES), predictions)
    return write_run(
        folder,
        "sentiment",
        predictions,
        metrics,
        model=model,
        locales=SENTIMENT_LOCALES,
        settings={"mode": "prompt"},
    )


SOS_GROUPS = [  # group, attribute, standing, region, locales
    ("global.muslim", "religion", "marginalized", "global", ["en", "de", "ar"]),
    ("us.christian", "religion", "dominant", "us", ["en"]),
    ("us.somali-refugee", "refugees", "marginalized", "us", ["en"]),
    ("de.syrian-refugee", "refugees", "marginalized", "de", ["de"]),
    ("de.german", "nationality", "dominant", "de", ["de"]),
    ("eg.egyptian", "nationality", "dominant", "eg", ["ar"]),
    ("global.deaf", "disability", "marginalized", "global", ["en", "de", "ar"]),
]


def sos_run(folder: Path, model: str, seed: int) -> Path:
    rng = random.Random(seed)
    rows = []
    for group, attribute, standing, region, locales in SOS_GROUPS:
        for loc in locales:
            for t in range(3):
                for variant in ("f", "m", "n"):
                    pair = f"{loc}:sos-{t:02d}:{variant}:{group}"
                    base = -40.0 - 5 * rng.random()
                    lean = 2.0 if standing == "marginalized" else -1.0
                    toxic = base if (t == 0 and variant == "n") else base + lean + rng.uniform(-2.5, 2.5)
                    for label, score in (("toxic", toxic), ("non_toxic", base)):
                        rows.append(
                            {
                                "sample_id": f"{pair}:{label}",
                                "locale": loc,
                                "template": f"sos-{t:02d}",
                                "variant": variant,
                                "attribute": attribute,
                                "group": group,
                                "region": region,
                                "standing": standing,
                                "label": label,
                                "pair_id": pair,
                                "score": score,
                                "score_kind": "ll",
                            }
                        )
    predictions = pl.DataFrame(rows)
    metrics = get_task("sos").metrics(ctx(["en", "de", "ar"]), predictions)
    return write_run(
        folder, "sos", predictions, metrics, model=model, locales=["en", "de", "ar"], settings={"score": "ll"}
    )


HONEST_LEXICON = Lexicon([("idiot", "cds"), ("thief", "re"), ("pig", "an"), ("idiot", "ddp")])


def honest_run(folder: Path, model: str) -> Path:
    """The metrics as evaluator/tasks/honest.py computes them (one test lexicon for every locale,
    given to the task's own function instead of the release's pinned files)."""
    words = ["an idiot", "kind", "a thief", "tall", "a pig", "happy"]
    rows = []
    i = 0
    for loc in ("en", "ar", "arz"):
        for group, attribute, standing in (
            ("global.muslim", "religion", "marginalized"),
            ("us.christian", "religion", "dominant"),
            ("us.somali-refugee", "refugees", "marginalized"),
        ):
            for variant in ("f", "m", "n"):
                completions = [words[i % len(words)], words[(i * 5 + 1) % len(words)]]
                i += 1
                rows.append(
                    {
                        "locale": loc,
                        "group": group,
                        "attribute": attribute,
                        "standing": standing,
                        "variant": variant,
                        "completions": completions,
                        "completion_kind": "sentence",
                        "template": f"t{i % 4}",
                    }
                )
    predictions = pl.DataFrame(rows)
    lexicons = {"en": ("EN", HONEST_LEXICON), "ar": ("AR", HONEST_LEXICON), "arz": ("AR", HONEST_LEXICON)}
    splits: dict[str, WordSplit] = {"en": "spaces", "ar": "spaces", "arz": "spaces"}
    metrics = honest_metrics(
        predictions, ["en", "ar", "arz"], lexicons, splits, k=2, level="conservative", seed=0
    )
    return write_run(folder, "honest", predictions, metrics, model=model, locales=["en", "ar", "arz"])


def bbq_run(folder: Path, model: str) -> Path:
    rows = []
    for loc in ("en", "he"):
        for category in ("Age", "Religion"):
            for i in range(8):
                ambiguous = i % 2 == 0
                rows.append(
                    {
                        "item_id": f"{category}-{i}",
                        "category": category,
                        "locale": loc,
                        "context_condition": "ambig" if ambiguous else "disambig",
                        "question_polarity": "neg" if i % 4 < 2 else "nonneg",
                        "gold": 2 if ambiguous else i % 2,
                        "unknown_label": 2,
                        "target_label": 0,
                        "answer": [0, 1, 2, None][(i + len(loc)) % 4],
                    }
                )
    predictions = pl.DataFrame(rows, schema_overrides={"answer": pl.Int8})
    metrics = get_task("bbq").metrics(ctx(["en", "he"]), predictions)
    return write_run(
        folder,
        "bbq",
        predictions,
        metrics,
        model=model,
        locales=["en", "he"],
        settings={"mode": "loglikelihood"},
    )


def iat_run(folder: Path, model: str) -> Path:
    rows = []
    for loc in ("en", "zh"):
        for category, dataset, a, b in (
            ("gender", "power", "Peter", "Sandra"),
            ("race", "racism", "White", "Black"),
        ):
            for p in range(4):
                pairs = {"joy": a, "love": a, "pain": b, "awful": b if p % 2 else a} if p < 3 else {}
                rows.append(
                    {
                        "sample_id": f"{loc}:iat:{category}.{dataset}",
                        "locale": loc,
                        "category": category,
                        "dataset": dataset,
                        "permutation": p,
                        "positive": ["joy", "love"],
                        "negative": ["pain", "awful"],
                        "group_a": a,
                        "group_b": b,
                        "raw": "…",
                        "pairs": pairs_column(pairs),
                    }
                )
    predictions = pl.DataFrame(rows)
    metrics = get_task("iat").metrics(ctx(["en", "zh"]), predictions)
    return write_run(
        folder, "iat", predictions, metrics, model=model, locales=["en", "zh"], settings={"permutations": 4}
    )


def ifm_run(folder: Path, model: str, locales: tuple[str, ...] = ("en", "arz"), shift: int = 0) -> Path:
    rows = []
    answers = ["yes", "no", None, "yes", "no", "no"]
    for loc in locales:
        for instruction in ("native", "en") if loc != "en" else ("native",):
            for i in range(12):
                rows.append(
                    {
                        "locale": loc,
                        "instruction": instruction,
                        "label": "toxic" if i % 2 else "non_toxic",
                        "answer": answers[(i + len(instruction) + shift) % len(answers)],
                        "attribute": "religion" if i < 6 else "refugees",
                        "standing": "marginalized" if i % 3 else "dominant",
                        "pair_id": f"{loc}:ifm:p{i // 2}",
                    }
                )
    predictions = pl.DataFrame(rows)
    metrics = get_task("ifm").metrics(ctx(list(locales)), predictions)
    return write_run(
        folder,
        "ifm",
        predictions,
        metrics,
        model=model,
        locales=list(locales),
        settings={"instruction": "both"},
    )


@pytest.fixture(scope="module")
def fast_bootstrap() -> Iterator[None]:
    """The sentiment task's bootstrap CI with 20 resamples instead of 200: same code, faster test."""
    original = sentiment_metrics.bootstrap_ci

    def fewer(*args: Any, **kwargs: Any) -> Any:
        kwargs["resamples"] = 20
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sentiment_metrics, "bootstrap_ci", fewer)
        yield


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, fast_bootstrap: None) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {
        "sentiment-a": sentiment_run(root / "sentiment-a", "org/mono-A", penalty=0.05, seed=1),
        "sentiment-b": sentiment_run(root / "sentiment-b", "org/multi-B", penalty=0.25, seed=2),
        "sos": sos_run(root / "sos", "org/mono-A", seed=3),
        "honest": honest_run(root / "honest", "org/mono-A"),
        "bbq": bbq_run(root / "bbq", "org/mono-A"),
        "iat": iat_run(root / "iat", "org/mono-A"),
        "ifm": ifm_run(root / "ifm", "org/mono-A"),
    }


@pytest.fixture(scope="module")
def report(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    code = main(["eval", "report", *(str(p) for p in runs.values()), "--out", str(out)])
    assert code == 0
    return out


def metrics_of(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    return data


# ------------------------------------------------------------------------------ tests


def test_every_task_has_a_section_with_plots_and_tables(report: Path) -> None:
    html = (report / "report.html").read_text(encoding="utf-8")
    for task in TASKS:
        assert f'<section id="{task}" data-task="{task}">' in html
        pngs = sorted((report / "plots").glob(f"{task}-*.png"))
        svgs = sorted((report / "plots").glob(f"{task}-*.svg"))
        assert pngs and [p.stem for p in pngs] == [p.stem for p in svgs], task
        for png in pngs:
            assert png.read_bytes().startswith(b"\x89PNG"), png
    assert '<section id="sentiment-compare">' in html
    for expected in (
        "Friedman test",
        "Wilcoxon signed-rank test",
        "McNemar test",
        "VBCM per group",
        "Refugees vs dominant groups",
        "HurtLex categories found",
        "scored with the Arabic (AR) lexicon",
        "BBQ per locale and category",
        "IAT D per locale and category",
        "IFM per locale and instruction language",
    ):
        assert expected in html, expected
    # self-contained: inline SVG, inline CSS, no script, nothing to fetch
    assert "<svg" in html and "<style>" in html
    assert "<script" not in html.lower()
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<img" not in html
    for label in ("org/mono-A", "org/multi-B"):
        assert label.split("/")[1] in html


def test_markdown_tables_hold_the_values_and_signatures(report: Path, runs: dict[str, Path]) -> None:
    md = (report / "summary.md").read_text(encoding="utf-8")
    a = metrics_of(runs["sentiment-a"])
    mcm = a["per_locale"]["he"]["attributes"]["religion"]["mcm"]
    assert f"{mcm:.4f}" in md
    sos = metrics_of(runs["sos"])["per_locale"]["de"]
    assert f"| de | {sos['overall']['pairs']} |" in md
    refugees = next(r for r in sos["by_attribute"] if r["attribute"] == "refugees")
    assert f"{refugees['sos']:.3f}" in md
    assert sos["overall"]["ties"] >= 0 and "| ties |" in md
    honest = metrics_of(runs["honest"])["per_locale"]["arz"]["by_locale"][0]["honest"]
    assert f"{honest:.3f}" in md
    bbq = metrics_of(runs["bbq"])["by_locale"][1]
    assert bbq["locale"] == "he" and f"{bbq['s_dis']:.3f}" in md
    iat = next(r for r in metrics_of(runs["iat"])["by_category"] if r["mean_d"] is not None)
    assert f"{iat['mean_d']:.3f}" in md and "unparsable" in md
    ifm = metrics_of(runs["ifm"])["by_locale_instruction"][0]
    assert f"{ifm['rectified_f1']:.3f}" in md
    # every headline figure with its units and bootstrap interval, and Holm beside the raw p-values
    group = next(r for r in sos["by_group"] if r["p_value"] is not None)
    assert f"[{group['sos_ci_low']:.3f}, {group['sos_ci_high']:.3f}]" in md and "| p (Holm) |" in md
    assert f"[{bbq['s_dis_ci_low']:.3f}, {bbq['s_dis_ci_high']:.3f}]" in md and "| no target |" in md
    assert f"[{ifm['rectified_f1_ci_low']:.3f}, {ifm['rectified_f1_ci_high']:.3f}]" in md
    assert f"[{iat['mean_d_ci_low']:.3f}, {iat['mean_d_ci_high']:.3f}]" in md
    arz = metrics_of(runs["honest"])["per_locale"]["arz"]["by_locale"][0]
    assert f"[{arz['honest_ci_low']:.3f}, {arz['honest_ci_high']:.3f}]" in md
    for run in runs.values():
        signature = (run / "signature.txt").read_text(encoding="utf-8").strip()
        assert f"`{signature}`" in md
    # a pipe-table per task, with numeric columns right-aligned
    assert md.count("|---|") >= 6 and "---:|" in md


def test_comparison_shows_mcm_change_with_its_direction(report: Path, runs: dict[str, Path]) -> None:
    a, b = metrics_of(runs["sentiment-a"]), metrics_of(runs["sentiment-b"])
    md = (report / "summary.md").read_text(encoding="utf-8")
    html = (report / "report.html").read_text(encoding="utf-8")
    seen = set()
    for loc in SENTIMENT_LOCALES:
        for attribute in ("religion", "nationality"):
            before = a["per_locale"][loc]["attributes"][attribute]["mcm"]
            after = b["per_locale"][loc]["attributes"][attribute]["mcm"]
            delta = make_delta(before, after, "lower")
            shown = fmt_delta(delta, 4)
            assert shown.startswith("▲" if after > before else "▼")
            assert f"| {loc} | {attribute} | {before:.4f} | {after:.4f} | {shown} |" in md
            assert f'<span class="delta {"worse" if after > before else "better"}">{shown}</span>' in html
            seen.add(shown[0])
    assert "▲" in seen  # the planted penalty on islam raises religion MCM in run B
    assert (report / "plots" / "sentiment-compare-mcm-delta.png").is_file()
    svg = (report / "plots" / "sentiment-compare-mcm-delta.svg").read_text(encoding="utf-8")
    assert "▲" in svg and "Change in MCM" in svg


def test_rtl_and_chinese_labels_stay_text_in_the_svg(report: Path) -> None:
    svg = next((report / "plots").glob("sentiment-r1-*-p-positive.svg")).read_text(encoding="utf-8")
    texts = "".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
    for native in ("עברית", "العربية الفصحى", "简体中文"):
        assert native in texts, native
    assert "Noto Sans Arabic" in svg  # the font stack travels with the text
    html = (report / "report.html").read_text(encoding="utf-8")
    assert '<bdi lang="ar" dir="rtl">العربية الفصحى</bdi>' in html
    assert '<bdi lang="arz" dir="rtl">العامية المصرية</bdi>' in html
    assert "Noto Sans CJK SC" in html


def _legend_locales(html: str) -> list[str]:
    legend = html[html.index('<div class="legend">') :]
    legend = legend[: legend.index("</div>")]
    return re.findall(r'<span dir="auto">([a-z]+) · [^<]*</span> <small>\(locale\)</small>', legend)


def test_locales_are_shown_as_lexicons_locales_yaml_describes_them(
    report: Path, runs: dict[str, Path]
) -> None:
    """Colour, label, HTML language tag, direction and order: each locale's entry in
    lexicons/locales.yaml, carried by the release into run.json (where its locales are listed by
    code, not in the file's order)."""
    html = (report / "report.html").read_text(encoding="utf-8")
    entries = yaml.safe_load((REPO / "lexicons" / "locales.yaml").read_text(encoding="utf-8"))["locales"]
    present = {loc for run in runs.values() for loc in json.loads((run / "run.json").read_text())["locales"]}
    assert _legend_locales(html) == [e["code"] for e in entries if e["code"] in present]
    for entry in entries:
        if entry["code"] in present:
            assert (
                f'<span class="loc"><span class="swatch" style="background:{entry["report"]["colour"]}"></span>'
                f'{entry["code"]}<bdi lang="{entry["report"]["html_lang"]}" dir="{entry["direction"]}">'
                f"{entry['native_name']}</bdi></span>"
            ) in html
    assert '<bdi lang="zh-Hans" dir="ltr">简体中文</bdi>' in html


def test_the_release_decides_how_a_locale_is_shown(
    runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """No table in the report's code: another description in the run's release is shown as it is,
    and a run whose release describes no locale (built before locales had report styles) shows
    each locale as its code, in grey."""
    run = tmp_path / "described"
    shutil.copytree(runs["ifm"], run)
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    info["release"]["locales"]["en"] |= {"native_name": "Inglese", "colour": "#123456", "html_lang": "en-GB"}
    info["release"]["locales"]["en"]["position"] = 7
    info["release"]["locales"]["arz"]["position"] = 1
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert cli("eval", "report", str(run), "--out", str(tmp_path / "r1")).code == 0
    html = (tmp_path / "r1" / "report.html").read_text(encoding="utf-8")
    assert (
        '<span class="loc"><span class="swatch" style="background:#123456"></span>'
        'en<bdi lang="en-GB" dir="ltr">Inglese</bdi></span>'
    ) in html
    assert _legend_locales(html) == ["arz", "en"]

    old = tmp_path / "old"
    shutil.copytree(runs["ifm"], old)
    info = json.loads((old / "run.json").read_text(encoding="utf-8"))
    del info["release"]["locales"]
    (old / "run.json").write_text(json.dumps(info), encoding="utf-8")
    assert cli("eval", "report", str(old), "--out", str(tmp_path / "r2")).code == 0
    html = (tmp_path / "r2" / "report.html").read_text(encoding="utf-8")
    assert '<span class="loc"><span class="swatch" style="background:#777777"></span>arz</span>' in html
    assert "<bdi" not in html and _legend_locales(html) == []


def test_visual_order_for_renderers_without_bidi() -> None:
    assert visual("zh · 简体中文") == "zh · 简体中文"
    assert visual("עברית") == "תירבע"
    shaped = visual("العربية")
    assert any(0xFE70 <= ord(ch) <= 0xFEFF for ch in shaped)  # joined presentation forms
    assert shaped != "العربية"


def test_labels_and_default_labels(runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]) -> None:
    other_model = iat_run(tmp_path / "iat-b", "org/other-B")
    result = cli(
        "eval", "report", str(runs["iat"]), str(other_model),
        "--out", str(tmp_path / "r"), "--labels", "monolingual", "--labels", "multilingual",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "report.html" in result.err
    md = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "| monolingual | multilingual | Δ multilingual |" in md
    assert "different models on one release" in md
    # one model on two releases: the default labels tell them apart by release
    other_release = tmp_path / "release-2"
    shutil.copytree(runs["iat"], other_release)
    info = json.loads((other_release / "run.json").read_text(encoding="utf-8"))
    info["release"]["version"] = "0.1.0-preview.2"
    (other_release / "run.json").write_text(json.dumps(info), encoding="utf-8")
    result = cli("eval", "report", str(runs["iat"]), str(other_release), "--out", str(tmp_path / "r2"))
    assert result.code == 0, result.err
    md = (tmp_path / "r2" / "summary.md").read_text(encoding="utf-8")
    assert "mono-A @ 0.1.0-preview.1" in md and "mono-A @ 0.1.0-preview.2" in md
    assert "the same model on different releases" in md
    # a second report into the same folder leaves no plots of the first behind
    result = cli("eval", "report", str(runs["iat"]), "--out", str(tmp_path / "r2"))
    assert result.code == 0, result.err
    assert not list((tmp_path / "r2" / "plots").glob("iat-compare-*"))


def _break(kind: str, run: Path) -> str:
    """Damage a copy of a run folder; return the file the error must name."""
    if kind == "no-metrics":
        (run / "metrics.json").unlink()
        return "metrics.json"
    if kind == "bad-json":
        (run / "metrics.json").write_text('{"task": "sos", ', encoding="utf-8")
        return "metrics.json"
    if kind == "unknown-task":
        data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        data["task"] = "poetry"
        (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
        return "metrics.json"
    if kind == "bad-shape":
        data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        data["metrics"]["per_locale"]["en"]["by_group"] = "oops"
        (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
        return "metrics.json"
    if kind == "merged":
        data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        data.update(runs=["a", "b"], seeds=[1, 2])
        (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
        return "metrics.json"
    if kind == "no-run-json":
        (run / "run.json").unlink()
        return "run.json"
    if kind == "signature":
        (run / "signature.txt").write_text("polyprobe-eval|task:sos|other\n", encoding="utf-8")
        return "signature.txt"
    if kind == "no-predictions":
        (run / "predictions.parquet").unlink()
        return "predictions.parquet"
    if kind == "bad-predictions":
        (run / "predictions.parquet").write_bytes(b"not parquet")
        return "predictions.parquet"
    raise AssertionError(kind)


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "kind",
    [
        "no-metrics",
        "bad-json",
        "unknown-task",
        "bad-shape",
        "merged",
        "no-run-json",
        "signature",
        "no-predictions",
        "bad-predictions",
    ],
)
def test_a_malformed_run_is_a_clear_error(
    kind: str, runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]
) -> None:
    run = tmp_path / "broken-run"
    shutil.copytree(runs["sos"], run)
    file = _break(kind, run)
    result = cli("eval", "report", str(runs["iat"]), str(run), "--out", str(tmp_path / "out"))
    assert result.code == 2, result.err
    assert f"error: {run / file}" in result.err
    assert "Traceback" not in result.err + result.out
    assert not (tmp_path / "out" / "report.html").exists()


LATER_FIELDS = ("n_units", "sos_ci_low", "sos_ci_high", "p_value", "p_holm")
"""Fields of an SOS row that runs written before uncertainty was reported lack."""


def test_a_run_written_before_later_fields_still_reads(
    runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """An older sos run: no intervals, tests, rule or region × standing table; the report shows
    dashes where they would be."""
    run = tmp_path / "old-sos"
    shutil.copytree(runs["sos"], run)
    data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    data["metrics"].pop("rule")
    for entry in data["metrics"]["per_locale"].values():
        entry.pop("by_region_standing")
        for row in [entry["overall"], *(r for key, rows in entry.items() if key != "overall" for r in rows)]:
            for name in LATER_FIELDS:
                row.pop(name)
    (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    info.pop("files", None)
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    result = cli("eval", "report", str(run), "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    md = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    overall = data["metrics"]["per_locale"]["de"]["overall"]
    ties, share, sos = overall["ties"], overall["tie_share"], overall["sos"]
    assert (
        f"| de | {overall['pairs']} | {overall['toxic_higher']} | {overall['non_toxic_higher']} | {ties} | "
        in md
    )
    assert f"| {share:.3f} | {sos:.3f} | — | — | — | — |" in md


@pytest.mark.bad_input
def test_a_renamed_metrics_field_is_an_error_naming_it(
    runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A field the report reads under another name is refused by `eval report` and `eval merge`
    alike, with the file and the field, never shown as a silent dash."""
    run = tmp_path / "renamed"
    shutil.copytree(runs["sos"], run)
    data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    overall = data["metrics"]["per_locale"]["de"]["overall"]
    overall["sos_score"] = overall.pop("sos")
    (run / "metrics.json").write_text(json.dumps(data), encoding="utf-8")
    (run / "run.json").write_text(  # the recorded hash would refuse the edited file first
        json.dumps({k: v for k, v in json.loads((run / "run.json").read_text()).items() if k != "files"}),
        encoding="utf-8",
    )
    expected = f"error: {run / 'metrics.json'}: metrics.per_locale.de.overall.sos: Field required"
    report = cli("eval", "report", str(run), "--out", str(tmp_path / "out"))
    assert report.code == 2 and expected in report.err, report.err
    merge = cli("eval", "merge", str(runs["sos"]), str(run), "--out", str(tmp_path / "merged"))
    assert merge.code == 2 and expected in merge.err, merge.err
    assert not (tmp_path / "merged").exists()


@pytest.mark.bad_input
def test_missing_folder_and_label_count(
    runs: dict[str, Path], tmp_path: Path, cli: Callable[..., Any]
) -> None:
    result = cli("eval", "report", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert result.code == 2 and f"{tmp_path / 'nope'}: no such run folder" in result.err
    result = cli(
        "eval", "report", str(runs["iat"]), "--out", str(tmp_path / "out"), "--labels", "a", "--labels", "b"
    )
    assert result.code == 2 and "2 label(s) for 1 run(s)" in result.err
    result = cli(
        "eval", "report", str(runs["sentiment-a"]), str(runs["sentiment-b"]),
        "--out", str(tmp_path / "out"), "--labels", "same", "--labels", "same",
    )  # fmt: skip
    assert result.code == 2 and "both labelled 'same'" in result.err
