// A file whose second kernel does not parse (nor compile): the battery asks for it by name.

__global__ void fine(int *out)
{
    out[threadIdx.x] = 1;
}

__global__ void broken(int *out)
{
    out[0] = ;  // LINE: broken
}
