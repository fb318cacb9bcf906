"""Writing outputs through Hadoop's ``FileSystem``: the same code for a local folder and for
``gs://`` (or HDFS) on a cluster, where executors cannot write to the driver's disk."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession


def hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """``(FileSystem, Path)`` for a local path or URI, through the session's Hadoop
    configuration (py4j objects; the Cloud Storage connector makes ``gs://`` work)."""
    jvm: Any = spark.sparkContext._jvm
    hadoop_path_ = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path_.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path_


class OutputFolder:
    """The ``--out`` folder: ``path`` is a local path or a URI."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        self._fs, self.root = hadoop_path(spark, path)
        self._fs.setWriteChecksum(False)  # no .crc files beside the outputs on a local disk
        if not self._fs.mkdirs(self.root):
            raise OSError(f"cannot create the output folder {path}")

    def path(self, name: str) -> Any:
        """The Hadoop path of ``name`` inside the folder."""
        return self.root.suffix("/" + name)

    def write_text(self, name: str, text: str) -> None:
        """Write (replace) a UTF-8 text file."""
        stream = self._fs.create(self.path(name), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def single_file(self, frame: DataFrame, fmt: str, name: str) -> None:
        """Write ``frame`` (ordered) as one ``fmt`` file ``name``: Spark writes a folder of one
        part, which is renamed into place."""
        staging = self.path(name + ".parts")
        self._fs.delete(staging, True)
        frame.coalesce(1).write.mode("overwrite").format(fmt).save(str(staging.toString()))
        parts = [
            s.getPath()
            for s in self._fs.listStatus(staging)
            if s.getPath().getName().startswith("part-")
        ]
        target = self.path(name)
        self._fs.delete(target, True)
        if parts:
            self._fs.rename(parts[0], target)
        else:  # an empty frame may leave no part file
            self._fs.create(target, True).close()
        self._fs.delete(staging, True)

    def reset(self, name: str) -> None:
        """Remove ``name`` (file or folder) if it exists."""
        self._fs.delete(self.path(name), True)
