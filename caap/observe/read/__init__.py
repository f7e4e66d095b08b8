"""The element reader, one folder as transformers keeps a model: ``configuration`` (the checkpoint
directory and the settings inference repeats from training), ``modeling`` (Pix2Struct with a CTC
text head), ``processing`` (semi-masked crops, native-resolution patches, colour statistics),
``target`` (the record format the decoder writes), ``inference`` (``Reader``: a screen's elements
read in one batch), with the CTC decoding (``ctc``), the character language model (``charlm``) and
a text area's lines (``lines``)."""
