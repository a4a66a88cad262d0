"""ascsim's implementation of pyasc's ``asc`` package (the Ascend C Python front-end).

Unmodified pyasc scripts run against this module when started with ``ascsim run`` (which makes
``import asc`` resolve here). The names and call forms follow pyasc; the kernels execute on the
simulated machine of :mod:`ascsim.sim`.
"""

from __future__ import annotations

from ascsim.asc import adv  # noqa: F401 - the asc.adv submodule
from ascsim.asc.auto_tensor import LocalTensorAuto
from ascsim.asc.basic.aipp import (
    AippChannelPaddingParams,
    AippColorSpaceConvParams,
    AippDataTypeConvParams,
    AippInputFormat,
    AippPaddingParams,
    AippParams,
    AippSingleLineParams,
    AippSwapParams,
    LoadImageToLocalParams,
    load_image_to_local,
    set_aipp_functions,
)
from ascsim.asc.basic.atomic import (
    get_store_atomic_config,
    set_atomic_add,
    set_atomic_max,
    set_atomic_min,
    set_atomic_none,
    set_atomic_type,
    set_store_atomic_config,
)
from ascsim.asc.basic.bilinear import bilinear_interpolation
from ascsim.asc.basic.block_reduce import (
    block_reduce_max,
    block_reduce_min,
    block_reduce_sum,
    pair_reduce_sum,
    repeat_reduce_sum,
)
from ascsim.asc.basic.block_sync import ib_set, ib_wait, notify_next_block, wait_pre_block
from ascsim.asc.basic.brcb import brcb
from ascsim.asc.basic.cmp_mask import get_cmp_mask, set_cmp_mask
from ascsim.asc.basic.copy_forms import DataCopyCO12DstParams, Nz2NdParamsFull, SliceInfo
from ascsim.asc.basic.core_config import (
    LoadDataRepeatParam,
    set_fix_pipe_pre_quant_flag,
    set_hf32_mode,
    set_hf32_trans_mode,
    set_load_data_boundary,
    set_load_data_repeat,
    set_pad_value,
)
from ascsim.asc.basic.crosscore import cross_core_set_flag, cross_core_wait_flag, sync_all
from ascsim.asc.basic.cube import *  # noqa: F403 - load_data, mmad, fixpipe and their params
from ascsim.asc.basic.data_copy import data_copy, data_copy_pad
from ascsim.asc.basic.debug_check import CheckLocalMemoryIAParam, check_local_memory_ia
from ascsim.asc.basic.fused_cast import (
    VdeqInfo,
    add_deq_relu,
    add_relu_cast,
    cast_deq,
    mul_cast,
    set_deq_scale,
    sub_relu_cast,
)
from ascsim.asc.basic.gather_mask import (
    GatherMaskParams,
    gather_mask,
    get_gather_mask_remain_count,
)
from ascsim.asc.basic.img2col import *  # noqa: F403 - Load3D, DN2NZ, gather
from ascsim.asc.basic.init_const import InitConstValueParams, init_const_value
from ascsim.asc.basic.list_tensor import ListTensorDesc, TensorDesc
from ascsim.asc.basic.load_forms import (
    LoadData2DParamsV2,
    LoadData2dTransposeParamsV2,
    LoadData3DParamsV1,
    LoadData3DParamsV2Pro,
    load_data,
    load_data_with_transpose,
)
from ascsim.asc.basic.mask import (
    MASK_PLACEHOLDER,
    reset_mask,
    set_mask_count,
    set_mask_norm,
    set_vector_mask,
)
from ascsim.asc.basic.scalar_bits import (
    count_bits_cnt_same_as_sign_bit,
    scalar_count_leading_zero,
    scalar_get_count_of_value,
    scalar_get_sff_value,
)
from ascsim.asc.basic.scatter import GatherRepeatParams, gatherb, scatter
from ascsim.asc.basic.sort import (
    MrgSort4Info,
    MrgSortSrcList,
    get_mrg_sort_result,
    get_sort_len,
    get_sort_offset,
    mrg_sort,
    mrg_sort4,
    proposal_concat,
    proposal_extract,
    rp_sort16,
    sort,
    sort32,
)
from ascsim.asc.basic.special import (
    cast,
    compare,
    compare_scalar,
    copy,
    duplicate,
    reduce_max,
    reduce_min,
    reduce_sum,
    select,
)
from ascsim.asc.basic.sync import data_sync_barrier, pipe_barrier, set_flag, wait_flag
from ascsim.asc.basic.system import *  # noqa: F403 - cache control, HCCL context, ...
from ascsim.asc.basic.sysvar import (
    ascend_is_aic,
    ascend_is_aiv,
    get_arch_version,
    get_block_idx,
    get_block_num,
    get_data_block_size_in_bytes,
    get_program_counter,
    get_sub_block_idx,
    get_sub_block_num,
    get_system_cycle,
    get_task_ratio,
    property,
    trap,
)
from ascsim.asc.basic.transpose import (
    TransDataTo5HDParams,
    TransposeParamsExt,
    trans_data_to_5hd,
    transpose,
)
from ascsim.asc.basic.vector import OPS as _VECTOR_OPS
from ascsim.asc.basic.whole_reduce import whole_reduce_max, whole_reduce_min, whole_reduce_sum
from ascsim.asc.dtypes import *  # noqa: F403
from ascsim.asc.dtypes import DataType
from ascsim.asc.enums import *  # noqa: F403
from ascsim.asc.fwk import TBuf, TBufPool, TPipe, TQue, TQueBind, get_tpipe_ptr
from ascsim.asc.jit import ConstExpr, JITFunction, jit
from ascsim.asc.jit_options import CodegenOptions, CompileOptions, LaunchOptions
from ascsim.asc.language import (
    array,
    dump_tensor,
    get_sys_workspace,
    inline,
    number,
    print_time_stamp,
    printf,
    range,
    scalar_cast,
    set_sys_workspace,
    static_assert,
    static_range,
)
from ascsim.asc.local_mem_allocator import LocalMemAllocator
from ascsim.asc.params import *  # noqa: F403
from ascsim.asc.struct import Struct
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.asc.values import GlobalAddress, RuntimeInt, ceildiv

globals().update(_VECTOR_OPS)

PlainValue = RuntimeInt

# pyasc's ``asc.core`` is its language core package (types, tensors, structs); loaded last, as
# it re-exports the definitions above.
from ascsim.asc.language import core  # noqa: E402
