"""cfa_lib.data: the shipped FinEval files parse completely and field by field; bad input fails clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfa_lib.data import DatasetError, Question, datasets_dir, load_dataset, parse_row

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def easy() -> list[Question]:
    return load_dataset("easy")


@pytest.fixture(scope="module")
def challenge() -> list[Question]:
    return load_dataset("challenge")


def test_default_folder_is_the_project_datasets_folder(monkeypatch):
    monkeypatch.delenv("CFA_DATASETS_DIR", raising=False)
    assert datasets_dir() == PROJECT_ROOT / "datasets" / "FinEval"


def test_every_row_of_both_files_parses(easy, challenge):
    assert len(easy) == 1032 and len(challenge) == 90
    for name, questions in (("easy", easy), ("challenge", challenge)):
        assert [q.id for q in questions] == [f"{name}_{i}" for i in range(len(questions))]
        for q in questions:
            assert q.dataset == name and list(q.choices) == ["A", "B", "C"], q.id
            assert q.answer in q.choices and q.stem, q.id
            assert all(text and text == text.strip() for text in q.choices.values()), q.id
            assert "CHOICES" not in q.stem and "Answer Choices" not in q.stem, q.id
            assert not q.stem.startswith(("Q:", "Read the questions", "Carefully read")), q.id
            assert not any(t.startswith(("B:", "C:")) or ",B:" in t or ", C:" in t for t in q.choices.values())


def test_answer_letters_match_the_source_file(easy):
    raw = json.loads((PROJECT_ROOT / "datasets" / "FinEval" / "CFA_Easy.json").read_text(encoding="utf-8"))
    assert [q.answer for q in easy] == [row["answer"].upper() for row in raw]
    assert {letter: sum(q.answer == letter for q in easy) for letter in "ABC"} == {
        "A": 323,
        "B": 359,
        "C": 350,
    }


def test_easy_3_choices_keep_commas_and_periods(easy):
    q = easy[3]
    assert q.id == "easy_3" and q.index == 3 and q.dataset == "easy"
    assert q.choices == {"A": "$112,555.", "B": "$113,330.", "C": "$113,733"}
    assert q.answer == "C" and q.correct_text == "$113,733"
    assert q.stem == (
        "The value in six years of $75,000 invested today at a stated annual interest rate of 7% "
        "compounded quarterly is closest to:"
    )
    assert q.distractors == {"A": "$112,555.", "B": "$113,330."}


def test_easy_9_the_worked_example(easy):
    q = easy[9]
    assert q.correct_text == "8.0% compounded semiannually."
    assert q.choices == {
        "A": "7.5% compounded continuously.",
        "B": "7.7% compounded daily.",
        "C": "8.0% compounded semiannually.",
    }
    assert q.open_text() == (
        "An investment of €500,000 today that grows to €800,000 after six years has a stated annual "
        "interest rate closest to:"
    )
    assert q.mcq_text() == (
        q.stem + "\n\nA: 7.5% compounded continuously.\nB: 7.7% compounded daily.\nC: 8.0% compounded semiannually."
    )


def test_easy_0_and_choices_with_inner_commas(easy):
    assert easy[0].choices == {"A": "maturity.", "B": "liquidity.", "C": "expected inflation."}
    assert easy[0].answer == "C"
    assert easy[874].choices == {
        "A": "Risk tolerance, budgeting, and reporting",
        "B": "Risk tolerance, measurement, and monitoring",
        "C": "Risk identification, measurement, and monitoring",
    }


def test_lower_case_answers_use_the_letter_not_gold(easy):
    # 470, 837, 848: answer 'a' but gold index 2; the letter agrees with the CFA answer key.
    assert [easy[i].answer for i in (447, 470, 837, 848)] == ["C", "A", "A", "A"]
    assert easy[848].correct_text == "relative return objective."


def test_pdf_debris_is_cleaned(easy):
    assert "construction company" in easy[655].stem
    assert "sufficient to stop a rise" in easy[901].choices["B"]
    assert "classified as" in easy[902].stem


def test_challenge_0_field_by_field(challenge):
    q = challenge[0]
    assert q.id == "challenge_0" and q.answer == "A"
    assert q.stem.startswith("Scenario: TOPIC: ETHICAL AND PROFESSIONAL STANDARDS")
    assert q.stem.endswith(
        "\n\nQuestion: To best comply with the CFA Institute Standards of Professional Conduct "
        "(the Standards) related to performance presentation, Somer should modify the:"
    )
    assert "Carefully read" not in q.stem and "Answer" not in q.stem[-200:]
    assert "more than 5% of his personal holdings" in q.stem  # '5\\%' unescaped
    assert q.choices == {
        "A": "text regarding Somer's investment returns.",
        "B": "presentation of the performance for Karibe's representative composite.",
        "C": "content of the disclosure statement related to assumptions and calculations.",
    }


def test_challenge_choices_with_commas_and_semicolons(challenge):
    assert challenge[5].choices == {"A": "-0.05%.", "B": "0.25%.", "C": "0.65%."}
    assert challenge[1].choices["B"] == "Yes, he violates the standard related to preservation of confidentiality"
    assert challenge[21].choices == {"A": "1.95%", "B": "2.45%", "C": "2.95%"}
    assert challenge[30].choices["A"] == "Nick Johnson: Portfolio A; Hamidah Johnson: Portfolio B"
    assert challenge[84].choices == {"A": "Portfolio A.", "B": "Portfolio B.", "C": "Portfolio C."}


def test_limit_takes_the_first_questions():
    assert [q.id for q in load_dataset("easy", limit=3)] == ["easy_0", "easy_1", "easy_2"]
    assert len(load_dataset("challenge", limit=500)) == 90


def test_sample_is_reproducible_sorted_and_seed_dependent():
    first = [q.index for q in load_dataset("easy", limit=20, sample_seed=7)]
    again = [q.index for q in load_dataset("easy", limit=20, sample_seed=7)]
    other = [q.index for q in load_dataset("easy", limit=20, sample_seed=8)]
    assert first == again and first == sorted(first) and len(set(first)) == 20
    assert first != other and first != list(range(20))


@pytest.mark.parametrize("name", ["hard", "Easy", "", "cfa_easy"])
def test_unknown_dataset_name(name):
    with pytest.raises(ValueError, match=r"name=.*accepted values: easy, challenge"):
        load_dataset(name)


@pytest.mark.parametrize("limit", [0, -1, 2.5, True, "10"])
def test_bad_limit(limit):
    with pytest.raises(ValueError, match="limit="):
        load_dataset("easy", limit=limit)


def _write(folder: Path, name: str, rows) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(rows if isinstance(rows, str) else json.dumps(rows), encoding="utf-8")


GOOD_EASY = {"text": "Q:What is 1+1?,CHOICES: A: 1.,B: 2.,C: 3.", "answer": "B"}


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"text": "Q:What is 1+1? A: 1 B: 2 C: 3", "answer": "B"}, "no answer choices found"),
        ({"text": "Q:What is 1+1?,CHOICES: 1, 2 or 3", "answer": "B"}, "no answer choices found"),
        ({"text": "Q:What is 1+1?,CHOICES: A: 1.,B: 2.,C: 3.", "answer": "D"}, "answer 'D' is not among"),
        ({"text": "Q:,CHOICES: A: 1.,B: 2.,C: 3.", "answer": "A"}, "empty question stem"),
        ({"query": "", "answer": "A"}, "field 'query' is missing or empty"),
        (
            {"text": "Q:What is 1+1?,CHOICES: A: 1.,B: 2 or 3.", "answer": "B", "choices": ["A", "B", "C"]},
            "found choices A, B but the row declares A, B, C",
        ),
    ],
)
def test_malformed_easy_rows_name_dataset_row_and_problem(tmp_path, monkeypatch, row, problem):
    _write(tmp_path, "CFA_Easy.json", [GOOD_EASY, row])
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=rf"easy row 1: .*{problem}"):
        load_dataset("easy")


def test_malformed_challenge_row(tmp_path, monkeypatch):
    row = {
        "query": "Carefully read.\nScenario: s;\nQuestion:;\nAnswer Choices: A: x, B: y, C: z. \nAnswer:",
        "answer": "A",
    }
    _write(tmp_path, "CFA_Challenge.json", [row])
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match="challenge row 0: empty question stem"):
        load_dataset("challenge")


def test_env_folder_may_be_the_parent_of_FinEval(tmp_path, monkeypatch):
    _write(tmp_path / "FinEval", "CFA_Easy.json", [GOOD_EASY])
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    [q] = load_dataset("easy")
    assert q.choices == {"A": "1.", "B": "2.", "C": "3."} and q.stem == "What is 1+1?"


def test_missing_file_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"CFA_Challenge\.json does not exist"):
        load_dataset("challenge")


def test_non_json_file_names_the_file(tmp_path, monkeypatch):
    _write(tmp_path, "CFA_Easy.json", "{not json")
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match=r"CFA_Easy\.json is not valid JSON"):
        load_dataset("easy")


def test_json_that_is_not_a_list_of_rows(tmp_path, monkeypatch):
    _write(tmp_path, "CFA_Easy.json", {"rows": []})
    monkeypatch.setenv("CFA_DATASETS_DIR", str(tmp_path))
    with pytest.raises(DatasetError, match="must hold a JSON list of objects"):
        load_dataset("easy")


@pytest.mark.parametrize(
    ("text", "choices"),
    [
        # label styles A. / A) / (A), and choices spread over several lines
        ("Q:Pick one,CHOICES: A. $1,000.,B. $2,000.,C. $3,000.",
         {"A": "$1,000.", "B": "$2,000.", "C": "$3,000."}),
        ("Q:Pick one,CHOICES: A) low, B) medium, C) high", {"A": "low", "B": "medium", "C": "high"}),
        ("Q:Pick one,CHOICES: (A) low (B) medium (C) high", {"A": "low", "B": "medium", "C": "high"}),
        ("Q:Pick one,CHOICES:\nA: rises,\nand keeps rising.\nB: falls.\nC: stays", {
            "A": "rises, and keeps rising.", "B": "falls.", "C": "stays"}),
        # the prompt's trailing 'Answer:' cue is not part of the last choice
        ("Q:Pick one,CHOICES: A: 7.5%.,B: 7.7%.,C: 8.0% Answer:", {"A": "7.5%.", "B": "7.7%.", "C": "8.0%"}),
        # a letter inside a choice is not a label
        ("Q:Pick one,CHOICES: A: Portfolio B.,B: Portfolio C.,C: Portfolio A.", {
            "A": "Portfolio B.", "B": "Portfolio C.", "C": "Portfolio A."}),
    ],
)  # fmt: skip
def test_choice_format_variations(text, choices):
    q = parse_row("easy", 0, {"text": text, "answer": "b"})
    assert q.choices == choices and q.answer == "B" and q.stem == "Pick one"


def test_query_is_used_when_text_is_absent():
    query = "Read the questions carefully.\nQ:Pick one,CHOICES: A: x.,B: y.,C: z. Answer:"
    q = parse_row("easy", 5, {"query": query, "answer": "C"})
    assert (q.id, q.stem, q.choices, q.correct_text) == (
        "easy_5",
        "Pick one",
        {"A": "x.", "B": "y.", "C": "z."},
        "z.",
    )


def test_question_is_frozen(easy):
    with pytest.raises(AttributeError):
        easy[0].answer = "A"  # type: ignore[misc]
