# Stage 2: word vectors per dataset (D-EMB): the paper's pretrained file, a stand-in (GloVe 6B 50-d, or
# word2vec trained here), or the word2vec the paper trains on the dataset.


rule download_vectors:
    output:
        "resources/embeddings/{file}",
    log:
        "results/logs/download_vectors/{file}.log",
    conda:
        "../envs/attnexp.yaml"
    params:
        source=vector_file_record,
        mirror=config["mirror"],
        download=config["download"],
    script:
        "../scripts/download_source.py"


rule build_embeddings:
    input:
        unpack(embedding_inputs),
    output:
        vectors="results/embeddings/{dataset}/vectors.npy",
        meta="results/embeddings/{dataset}/vectors.json",
    log:
        "results/logs/build_embeddings/{dataset}.log",
    benchmark:
        "results/benchmarks/build_embeddings/{dataset}.tsv"
    conda:
        "../envs/attnexp.yaml"
    threads: 1  # gensim word2vec is deterministic only with one worker
    params:
        plan=lambda wildcards: embedding_plan(wildcards.dataset),
    script:
        "../scripts/build_embeddings.py"


TARGETS["embeddings"] = embedding_targets()
