"""Compressed export files, read whole once before Spark reads them: their size after
decompression, or why they cannot be read.

A ``.json.gz`` cut short (a copy interrupted, a disk filled) fails inside a Spark task with
``java.io.EOFException: Unexpected end of input stream`` and stops the whole audit; a file whose
codec is missing or whose data is corrupt fails the same way. Each compressed file is therefore
decompressed once on the driver, in the JVM (``InputStream.transferTo`` a null stream: no byte
crosses to Python), before the read: a file that fails is listed with its cause
(:attr:`pushguard.audit.read.Inputs.unreadable`) and left out, and the others are audited. The
size after decompression is what :mod:`pushguard.audit.long_lines` checks the read lines
against. The codec is the one Hadoop picks by the file's extension
(``CompressionCodecFactory``), as Spark's text source does.

The cost is one more decompression of each compressed input, on the driver (a few files at a
time, in threads); uncompressed files (what ``gcloud asset export`` writes) cost nothing here.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyspark.sql import SparkSession

from pushguard.audit.causes import java_cause
from pushguard.audit.outputs import hadoop_path

_THREADS = 4


def codec_of(spark: SparkSession, path: Any) -> Any:
    """The codec Spark's text source decompresses a Hadoop ``path`` with, or None (not
    compressed): Spark 4's ``HadoopCodecStreams.getDecompressionCodec`` (Hadoop's codec by
    extension, and ``.zstd`` and ``.gzip`` too: apache/spark
    ``core/src/main/scala/org/apache/spark/io/HadoopCodecStreams.scala``), else Hadoop's
    ``CompressionCodecFactory`` (Spark 3.5)."""
    jvm: Any = spark.sparkContext._jvm
    config = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        found = jvm.org.apache.spark.io.HadoopCodecStreams.getDecompressionCodec(config, path)
        return found.get() if found.isDefined() else None
    except Exception:  # Spark 3.5: no HadoopCodecStreams
        return jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(config).getCodec(path)


def open_decompressed(spark: SparkSession, name: str) -> Any:
    """A Java ``InputStream`` of the file ``name`` after decompression, as Spark's line reader
    opens it (``HadoopLineRecordReader``: the codec's stream, else, for Zstandard without
    Hadoop's native library, Spark's own).

    Raises:
        Exception: what Hadoop raises when the file cannot be opened or its codec used.
    """
    fs, path = hadoop_path(spark, name)
    codec = codec_of(spark, path)
    raw = fs.open(path)
    if codec is None:
        return raw
    try:
        return codec.createInputStream(raw)
    except Exception:
        jvm: Any = spark.sparkContext._jvm
        try:
            fallback = jvm.org.apache.spark.io.HadoopCodecStreams.createZstdInputStream(path, raw)
        except Exception:
            fallback = None
        if fallback is None or not fallback.isDefined():
            raw.close()
            raise
        return fallback.get()


def decompressed_size(spark: SparkSession, name: str) -> int:
    """The size of the compressed file ``name`` after decompression, in bytes.

    Raises:
        Exception: what Hadoop raises when the file cannot be opened or decompressed (a py4j
            error whose Java exception :func:`~pushguard.audit.causes.java_cause` names).
    """
    jvm: Any = spark.sparkContext._jvm
    stream = open_decompressed(spark, name)
    try:
        return int(stream.transferTo(jvm.java.io.OutputStream.nullOutputStream()))
    finally:
        stream.close()


def measure(spark: SparkSession, names: list[str]) -> dict[str, int | str]:
    """For each compressed file of ``names``, its size after decompression or, when it cannot
    be decompressed, the reason (``cannot be decompressed (cut short or corrupt): CAUSE``)."""

    def one(name: str) -> int | str:
        try:
            return decompressed_size(spark, name)
        except Exception as error:
            return f"cannot be decompressed (cut short or corrupt): {java_cause(error)}"

    if not names:
        return {}
    with ThreadPoolExecutor(max_workers=min(_THREADS, len(names))) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))
