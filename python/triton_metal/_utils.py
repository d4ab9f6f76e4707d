"""`triton._utils` names that tests and libraries import."""

# Every spelling of a type (Python's, NumPy's, torch's, Triton's long and
# short ones) to Triton's short signature name; bools are unsigned.
type_canonicalisation_dict = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8_e4m3fn": "fp8e4nv",
    "float8e5": "fp8e5", "float8_e5m2": "fp8e5",
    "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16",
    "float": "fp32", "float32": "fp32", "double": "fp64", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "void": "void",
}
# ...and each short name to itself.
type_canonicalisation_dict.update({v: v for v in list(type_canonicalisation_dict.values())})


def canonicalize_dtype(dtype):
    return type_canonicalisation_dict[str(dtype).split(".")[-1]]
