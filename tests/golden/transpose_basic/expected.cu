#define BLK_DIM 16
__global__ void transpose(float *odata, float *idata, int width, int height)
{ ::gmprof::enter();
    __shared__ float shared_data[BLK_DIM][BLK_DIM];
    unsigned int xIndex = blockIdx.x * BLK_DIM + threadIdx.x;
    unsigned int yIndex = blockIdx.y * BLK_DIM + threadIdx.y;
    if ((xIndex < width) && (yIndex < height))
        { ::gmprof::sm<0, 2, ::gmprof::EACH>(&(shared_data[threadIdx.y][threadIdx.x]), (const void *)(shared_data), ::gmprof::One(), nullptr); ::gmprof::dm<1, 1, ::gmprof::EACH>(&(idata[yIndex * width + xIndex]), ::gmprof::One(), nullptr); shared_data[threadIdx.y][threadIdx.x] = idata[yIndex * width + xIndex]; }
    __syncthreads();
    xIndex = blockIdx.y * BLK_DIM + threadIdx.x;
    yIndex = blockIdx.x * BLK_DIM + threadIdx.y;
    if ((xIndex < height) && (yIndex < width))
        { ::gmprof::dm<2, 0, ::gmprof::EACH>(&(odata[yIndex * height + xIndex]), ::gmprof::One(), nullptr); ::gmprof::sm<3, 2, ::gmprof::EACH>(&(shared_data[threadIdx.x][threadIdx.y]), (const void *)(shared_data), ::gmprof::One(), nullptr); odata[yIndex * height + xIndex] = shared_data[threadIdx.x][threadIdx.y]; }
 ::gmprof::leave_all(); }
