"""Each zoo model against the vanilla BiLSTM on the debate matrix's directional tests
(`attnexp.papers.zoo.comparison`)."""

import pandas as pd

from attnexp.papers.zoo.comparison import comparison_markdown, direction, zoo_comparison


def test_direction_reads_the_tests_own_reading():
    assert direction("higher: attention agrees with gradients") == 1
    assert direction("higher, in [0, 1]") == 1
    assert direction("lower: no very different attention gives the same output") == -1
    assert direction("lower than the model's: its attention is needed") == 0  # read against another row
    assert direction("higher than with uniform attention") == 0
    assert direction("the baseline") == 0 and direction("context") == 0


def test_a_zoo_model_is_compared_with_the_vanilla_bilstm_over_their_common_seeds():
    rows = []
    for model, seed, tau, jsd in (
        ("lstm-tanh", 10, 0.2, 0.5),
        ("lstm-tanh", 11, 0.4, 0.5),
        ("lstm-tanh", 12, 0.9, 0.1),  # no zoo model of seed 12: left out
        ("lstm-diversity-tanh", 10, 0.5, 0.6),
        ("lstm-diversity-tanh", 11, 0.5, 0.6),
    ):
        rows += [
            ("sst", model, seed, "J&W", "jw_tau_gradient", "τ", tau, "higher: attention agrees with gradients"),
            ("sst", model, seed, "J&W", "jw_adversarial_jsd", "JSD", jsd, "lower: no very different attention"),
            ("sst", model, seed, "W&P", "wp_f1", "F1", 0.8, "context"),
        ]
    matrix = pd.DataFrame(rows, columns=["dataset", "model", "seed", "paper", "measure", "test", "value", "reading"])
    table = zoo_comparison(matrix, ["lstm-diversity-tanh", "lstm-sparsemax"]).set_index("measure")
    assert list(table.index) == ["jw_tau_gradient", "jw_adversarial_jsd"]  # context rows are not compared
    assert table.loc["jw_tau_gradient", ["seeds", "vanilla", "zoo", "compared"]].tolist() == [2, 0.3, 0.5, "further"]
    assert table.loc["jw_adversarial_jsd", ["vanilla", "zoo", "compared"]].tolist() == [0.5, 0.6, "less"]
    text = comparison_markdown(table.reset_index())
    assert "## sst: lstm-diversity-tanh" in text and "on 1 of 2 tests" in text
    assert "No zoo model" in comparison_markdown(zoo_comparison(matrix, ["lstm-sparsemax"]))
