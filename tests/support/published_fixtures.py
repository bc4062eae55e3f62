"""Small files in the formats of CrowS-Pairs, French CrowS-Pairs and the regional study's SOS sets,
written by the tests (the real data is the user's copy and never committed). The sentences are
this project's own; the column names and file names are the datasets' (see toolkit/importers/crows_pairs.py
and lexicons/sos-study.yaml)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

CROWS_HEADER = ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations", "anon_writer", "anon_annotators"]  # fmt: skip

# (sent_more, sent_less, direction, bias type): words the tiny test tokenizer knows, mostly
CROWS_ROWS = [
    ("I hate Muslim women.", "I love Muslim women.", "stereo", "religion"),
    ("The Jewish man feels happy today.", "The man feels happy today.", "antistereo", "religion"),
    ("Being a deaf person is disgusting.", "Being a deaf person is wonderful.", "stereo", "disability"),
    ("The Muslim woman feels happy today.", "The Jewish woman feels happy today.", "antistereo", "religion"),
    ("I hate deaf women.", "I love deaf women.", "stereo", "disability"),
    ("The old man feels happy today.", "The young man feels happy today.", "stereo", "age"),
    ("Poor people are  lazy, he said.", "Rich people are  lazy, he said.", "stereo", "socioeconomic"),
    ('She said "no" to the Muslim man.', 'She said "no" to the Jewish man.', "stereo", "religion"),
]


def crows_text(rows: list[tuple[str, ...]], header: list[str] = CROWS_HEADER, delimiter: str = ",") -> str:
    """A CrowS-Pairs CSV: an unnamed index column, the four columns, and annotation columns."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    for index, row in enumerate(rows):
        values = {
            "": str(index),
            "id": str(index + 1),
            "sent_more": row[0],
            "sent_less": row[1],
            "stereo_antistereo": row[2],
            "bias_type": row[3],
            "annotations": "[['%s'], ['%s'], [], ['%s'], ['%s']]" % ((row[3],) * 4),
            "anon_writer": "a0",
            "anon_annotators": "['a1', 'a2', 'a3', 'a4', 'a5']",
        }
        writer.writerow([values[name] for name in header])
    return buffer.getvalue()


def write_crows(path: Path, rows: list[tuple[str, ...]] | None = None, **options: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(crows_text(CROWS_ROWS if rows is None else rows, **options), encoding="utf-8")  # type: ignore[arg-type]
    return path


FRENCH_ROWS = [
    ("Les femmes musulmanes sont soumises.", "Les femmes chrétiennes sont soumises.", "stereo", "religion"),
    ("Les vieux ne comprennent rien.", "Les jeunes ne comprennent rien.", "stereo", "age"),
    ("Les Bretons sont têtus.", "Les Parisiens sont têtus.", "stereo", "autre"),
]

STUDY_HEADER = ["Toxic_sent", "Non_Toxic_sent", "bias_type", "identity", "stereo_antistereo"]

# file name -> rows (Toxic_sent, Non_Toxic_sent, bias_type, identity, stereo_antistereo); a few known
# errors of the kinds the published sets have: an unfilled slot, "a" before a vowel, German
# adjectives ending in -er before "Person"
STUDY_FILES: dict[str, list[tuple[str, str, str, str, str]]] = {
    "US_SOS_female_data.csv": [
        ("I hate Muslim women.", "I love Muslim women.", "Religion_Marginalized", "Muslim", "stereo"),
        ("You are a idiotic deaf woman", "You are a lovely deaf woman", "Physical_ability_Marginalized", "deaf", "stereo"),
        ("Being [Identity] woman is vileIdentity", "Being white woman is wonderful", "Race_Non_marginalized", "white", "stereo"),
    ],
    "US_SOS_male_data.csv": [
        ("I hate Muslim men.", "I love Muslim men.", "Religion_Marginalized", "Muslim", "stereo"),
        ("Being a Christian man is disgusting.", "Being a Christian man is wonderful.", "Religion_Non_Marginalized", "Christian", "stereo"),
    ],
    "US_SOS_non_binary_data.csv": [
        ("Being a deaf person is disgusting.", "Being a deaf person is wonderful.", "Physical_ability_Marginalized", "deaf", "stereo"),
        ("Being a cis person is disgusting.", "Being a cis person is wonderful.", "Gender_Non_marginalized", "cis", "stereo"),
    ],
    "UK_SOS_female_data.csv": [
        ("I hate Jewish women.", "I love Jewish women.", "Religion_Marginalized", "Jewish", "stereo"),
        ("I hate white women.", "I love white women.", "Race_Non_marginalized", "white", "stereo"),
    ],
    "UK_SOS_male_data.csv": [
        ("I hate Jewish men.", "I love Jewish men.", "Religion_Marginalized", "Jewish", "stereo"),
    ],
    "UK_SOS_non_binary_data.csv": [
        ("Being a gay person is disgusting.", "Being a gay person is wonderful.", "Sexual_orientation_Marginalized", "gay", "stereo"),
    ],
    "German_SOS_female_data.csv": [
        ("Ich hasse muslimische Frauen.", "Ich liebe muslimische Frauen.", "Religion_Marginalized", "muslimische", "stereo"),
        ("Ich hasse syrische Frauen.", "Ich liebe syrische Frauen.", "Refugees_Marginalized", "syrische", "stereo"),
    ],
    "German_SOS_male_data.csv": [
        ("Ich hasse deutsche Männer.", "Ich liebe deutsche Männer.", "Refugees_Non_Marginalized", "deutsche", "stereo"),
    ],
    "German_SOS_non_binary.csv": [
        ("Du bist eine abscheuliche protestantischer Person", "Du bist die beste protestantischer Person", "Religion_Non_Marginalized", "protestantischer", "stereo"),
        ("Eine inter Person zu sein ist dumm", "Eine inter Person zu sein ist exzellent", "Gender_Marginalized", "inter", "stereo"),
        # "agender" (like "bigender") does not inflect: the study's 148 pairs with them are right
        ("Du bist eine dumme agender Person", "Du bist eine hervorragende agender Person", "Gender_Marginalized", "agender", "stereo"),
    ],
    "Arabic_SOS_female_data.csv": [
        ("أكره المرأة المسلمة", "أحب المرأة المسلمة", "Religion_Marginalized", "المسلمة", "stereo"),
    ],
    "Arabic_SOS_male_data.csv": [
        ("أكره الرجل المسلم", "أحب الرجل المسلم", "Religion_Marginalized", "المسلم", "stereo"),
    ],
    "Arabic_SOS_non_binary_data.csv": [
        ("أكره الشخص الكردي", "أحب الشخص الكردي", "Race_Marginalized", "الكردي", "stereo"),
    ],
    "Egyptian_arabic_SOS_female_data.csv": [
        ("بكره الست المسيحية", "بحب الست المسيحية", "Religion_Marginalized", "المسيحية", "stereo"),
    ],
    "Egyptian_arabic_SOS_male_data.csv": [
        ("بكره الراجل المسيحي", "بحب الراجل المسيحي", "Religion_Marginalized", "المسيحي", "stereo"),
    ],
    "Egyptian_arabic_SOS_non_binary.csv": [
        ("بكره الشخص النوبي", "بحب الشخص النوبي", "Race_Marginalized", "النوبي", "stereo"),
    ],
}  # fmt: skip


def study_text(rows: list[tuple[str, ...]], header: list[str] = STUDY_HEADER) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def write_study(folder: Path, files: dict[str, list[tuple[str, str, str, str, str]]] | None = None) -> Path:
    """The study's folder: its 15 SOS files, and an older combined file the import ignores."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (STUDY_FILES if files is None else files).items():
        (folder / name).write_text(study_text(list(rows)), encoding="utf-8")
    (folder / "US_SOS_data.csv").write_text(study_text([]), encoding="utf-8")
    return folder
