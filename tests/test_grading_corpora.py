"""Every hand-labelled grading corpus keeps its score: no more wrong decisions and no fewer rows settled than
recorded here (benchmarks/grading.py prints the full tables). A change to the reader that trades a wrong verdict
somewhere else for a fix here fails this test; a better score is recorded by lowering or raising the numbers."""

from __future__ import annotations

import pytest

from benchmarks.grading import DEFAULT_CORPORA, corpus_report

# corpus: (wrong decisions at most, rows covered at least, rows)
RECORDED = {
    "grading_corpus": (0, 345, 357),
    "grading_corpus_commitment": (0, 228, 240),
    "grading_corpus_blind": (2, 249, 256),
    "grading_corpus_fresh": (0, 245, 255),
    "grading_corpus_kept_out": (0, 164, 172),
    "grading_corpus_kept_out_2": (0, 309, 350),
    "grading_corpus_kept_out_3": (0, 156, 170),
    "grading_corpus_kept_out_4": (0, 145, 160),
    "grading_corpus_fresh_2": (0, 292, 310),
    "grading_corpus_kept_out_5": (0, 235, 251),
    "grading_corpus_kept_out_6": (0, 273, 297),
    "grading_corpus_kept_out_7": (0, 270, 292),
    "grading_corpus_kept_out_8": (2, 284, 302),
    "grading_corpus_kept_out_9": (2, 274, 303),
    "grading_corpus_kept_out_10": (4, 283, 309),
    "grading_corpus_kept_out_11": (0, 242, 263),
    "grading_corpus_kept_out_12": (0, 307, 329),
    "grading_corpus_kept_out_13": (0, 273, 290),
    # 14 to 17 were scored once, out of sample, at (3, 216), (8, 219), (7, 197), (9, 197); rules written from them since
    "grading_corpus_kept_out_14": (0, 220, 236),
    "grading_corpus_kept_out_15": (0, 223, 242),
    "grading_corpus_kept_out_16": (0, 198, 214),
    "grading_corpus_kept_out_17": (0, 202, 217),
    # scored once, out of sample, at (16, 232) on f25f983; 9 of the 10 wrong decisions left are rows on dataset
    # questions whose key writer V disputes (easy_96, 223, 249, 362, 422, 713): the letter is read right
    "grading_corpus_kept_out_18": (9, 236, 249),
    # scored once, out of sample, at (4, 228) on 2b522e5; rules written from it since
    "grading_corpus_kept_out_19": (0, 229, 238),
    # scored once, out of sample, at (6, 212) on 6e436ca; rules written from it since
    "grading_corpus_kept_out_20": (0, 215, 232),
    # scored once, out of sample, at (2, 228) on ed59f8a; rules written from it since
    "grading_corpus_kept_out_21": (0, 230, 242),
    # scored once, out of sample, at (5, 232) on 5d6dc01; rules written from it since; the 2 wrong decisions left
    # are values on the window's far edge, which the book's method calls not correct and the writer's manual correct
    "grading_corpus_kept_out_22": (2, 236, 247),
    # kept out while the reader changed, scored once, out of sample, at (2, 230) on the session's final reader 79450dd
    "grading_corpus_kept_out_23": (1, 232, 252),
    # scored once, out of sample, at (3, 190) on the session's final reader e6e5370; two doubt forms fixed since
    "grading_corpus_kept_out_24": (0, 189, 200),
    # scored once, out of sample, at (1, 232) on 40e0e2a; its one miss fixed since
    "grading_corpus_kept_out_25": (0, 233, 246),
    # scored once, out of sample, at (4, 232) on 40e0e2a; two misses fixed, two now the judge's
    "grading_corpus_kept_out_26": (0, 243, 259),
    # scored once, out of sample, on the session's final reader fc71049 at (4, 217), (2, 227) and (5, 205); nine misses
    # fixed since
    "grading_corpus_kept_out_27": (0, 218, 240),
    "grading_corpus_kept_out_28": (0, 225, 239),
    "grading_corpus_kept_out_29": (0, 219, 250),
    "grading_corpus_kept_out_30": (0, 217, 235),
    "grading_corpus_kept_out_39": (0, 234, 237),
    "grading_corpus_kept_out_40": (0, 211, 234),
    "grading_corpus_kept_out_41": (0, 255, 283),
    "grading_corpus_kept_out_42": (0, 163, 183),
    "grading_corpus_kept_out_43": (0, 184, 200),
    "grading_corpus_kept_out_44": (0, 210, 227),
    "grading_corpus_kept_out_45": (0, 195, 202),
    "grading_corpus_kept_out_46": (1, 224, 235),
    "grading_corpus_kept_out_47": (1, 215, 242),
    "grading_corpus_kept_out_48": (0, 249, 270),
    "grading_corpus_kept_out_49": (0, 185, 198),
    "grading_corpus_kept_out_50": (3, 132, 140),
    # scored once mid-session on the start reader 5e475d7 at (2, 178) and on c7613c2 at (2, 178)
    "grading_corpus_kept_out_51": (1, 176, 187),
    # scored once mid-session on the start reader 5e475d7 at (5, 169) and on c7613c2 at (4, 167)
    "grading_corpus_kept_out_52": (1, 166, 185),
    # scored once mid-session on the start reader 5e475d7 at (3, 191) and on c7613c2 at (2, 179)
    "grading_corpus_kept_out_56": (0, 182, 220),
    # scored once mid-session on the start reader 5e475d7 at (2, 254) and on c7613c2 at (1, 251)
    "grading_corpus_kept_out_58": (0, 252, 261),
    # scored once mid-session on the start reader 5e475d7 at (7, 325) and on 71811d6 at (5, 320)
    "grading_corpus_kept_out_59": (0, 305, 337),
    # scored once mid-session on the start reader 5e475d7 at (3, 233) and on 71811d6 at (3, 232)
    "grading_corpus_kept_out_60": (1, 232, 242),
    # scored once mid-session on the start reader 5e475d7 at (2, 252) and on 9b0a46d at (2, 252)
    "grading_corpus_kept_out_61": (0, 252, 257),
    # kept out while the reader changed, scored once on the session's final reader 2c59fb0 at (2, 211)
    "grading_corpus_kept_out_53": (2, 211, 236),
    # kept out while the reader changed, scored once on the session's final reader 2c59fb0 at (4, 257)
    "grading_corpus_kept_out_54": (3, 257, 293),
    # kept out while the reader changed, scored once on the session's final reader 2c59fb0 at (1, 264)
    "grading_corpus_kept_out_55": (0, 263, 277),
    # kept out while the reader changed, scored once on the session's final reader 2c59fb0 at (2, 252)
    "grading_corpus_kept_out_57": (0, 252, 259),
    "grading_corpus_kept_out_36": (1, 213, 240),
    "grading_corpus_kept_out_37": (0, 214, 233),
    "grading_corpus_kept_out_38": (0, 274, 296),
    "grading_corpus_kept_out_34": (0, 221, 234),
    "grading_corpus_kept_out_35": (0, 223, 245),
    "grading_corpus_kept_out_33": (0, 216, 240),
    "grading_corpus_kept_out_32": (0, 220, 234),
    "grading_corpus_kept_out_31": (1, 228, 247),
}


@pytest.mark.parametrize("corpus", DEFAULT_CORPORA, ids=[c.name for c in DEFAULT_CORPORA])
def test_corpus_keeps_its_score(corpus):
    _, overall = corpus_report(corpus)
    wrong, covered, rows = RECORDED[corpus.name]
    assert overall.rows == rows
    assert overall.decided - overall.right <= wrong, f"{overall.decided - overall.right} wrong decisions"
    assert overall.covered >= covered
